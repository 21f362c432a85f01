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

/* long double after `...`, among integers, doubles and strings, as a printf-like logger's %Lf and %La pass
   it. AAPCS64 passes each in a whole q register while one of q0…q7 is free and then on the stack (16-byte
   aligned); x86_64 always on the stack. The second call fills v0…v6 with doubles, so that its first long
   double takes q7 and the rest the stack. fx_format_long_doubles formats the same with C's snprintf. */
#define FX_LONG_DOUBLES_0 "%Lf %d %La %s %.1f %Lf", 2.5L, 7, 1.0L / 3.0L, "mid", 1.5, -0.25L
#define FX_LONG_DOUBLES_1 \
    "%.1f %.1f %.1f %.1f %.1f %.1f %.1f %La %La %d %Lf %s", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 1.0L / 3.0L, 2.0L / 3.0L, 9, 2.5L, "end"

void fx_log_long_doubles(fx_log_hook hook, void *context) {
    hook(context, FX_LONG_DOUBLES_0);
    hook(context, FX_LONG_DOUBLES_1);
}

int fx_format_long_doubles(int call, char *buffer, size_t size) {
    return call == 0 ? snprintf(buffer, size, FX_LONG_DOUBLES_0) : snprintf(buffer, size, FX_LONG_DOUBLES_1);
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
