struct b;
struct a { struct b x; };
struct b { struct a y; };
