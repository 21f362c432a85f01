struct s { int a[99999999999]; };
