struct a { struct a x; };
