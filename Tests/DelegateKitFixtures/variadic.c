/* Variadic callbacks, called the way C libraries call their logging and formatting hooks. The header does
   not declare these (Swift reads no variadic function pointer type): the tests reach them through
   fx_function. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*fx_log_hook)(void *context, const char *format, ...);

/* A printf-like logger's call, with every kind of argument C passes after `...`. */
void fx_log_kinds(fx_log_hook hook, void *context) {
    hook(context, "%d %s %.2f %ld %c %u %p", 42, "apples", 1.5, 1L << 40, 'x', 4000000000u, (void *)0x1234);
}

/* More arguments than the registers hold: the last integers and doubles arrive on the stack. */
void fx_log_many(fx_log_hook hook, void *context) {
    hook(context, "%d %d %d %d %d %d %d %d %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %s", 1, 2, 3, 4, 5, 6, 7, 8,
         1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, "end");
}

/* A variadic callback that returns a value: sum(count, ...) of `count` ints. */
long fx_sum_through(long (*sum)(int count, ...)) {
    return sum(3, 1, 2, 3) * 1000 + sum(10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
}

/* Fixed float and double arguments before `...`: f(2, 0.5, 3, 1.0, 2.0, 3.0). */
double fx_mixed_through(double (*f)(float scale, double offset, int count, ...)) {
    return f(2.0f, 0.5, 3, 1.0, 2.0, 3.0);
}

/* A variadic function as a C library puts one in a table: formats into the 256 bytes `context` points to. */
void fx_log_into(void *context, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf((char *)context, 256, format, arguments);
    va_end(arguments);
}
