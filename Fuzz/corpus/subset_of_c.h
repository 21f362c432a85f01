#include <stddef.h>
/* Several declarations; the struct to use is named. */
typedef struct node node;             // forward-declared, used behind a pointer
enum color { RED, GREEN = 4, BLUE = 1 << 3 };
typedef unsigned long long int u64;
typedef void (*logger)(void *context, const char *format, ...);
struct point { short int x, y; };
typedef struct {
    const volatile signed char tag;
    struct point corners[2];          // a struct array by value
    struct { double weight; _Bool on; } inner;   // nested definition
    enum color color;
    u64 big;
    long double precise;
    node *next;
    struct opaque *handle;            // unknown struct behind a pointer
    char name[16];
    logger log;                       // variadic: a plain pointer member
    int (*compare)(const void *, const void *);
    size_t (*measure)(node *, struct point);
} shape_methods;
int shape_area(const shape_methods *shape);   // a prototype, ignored
