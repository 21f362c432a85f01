/* Complex numbers by value, as C passes them: callbacks that take and return them, and the conversions
   a test needs to read a long double _Complex it cannot load in Swift (aarch64's is a pair of quads).
   Swift imports none of these (it has no C complex types): the tests reach them through fx_function. */
#include <complex.h>

/* Returns 2 * f(z, w): C calls the closure and uses what it returns. */
double _Complex fx_complex_apply(double _Complex (*f)(double _Complex, float _Complex), double _Complex z, float _Complex w) {
    return 2 * f(z, w);
}

/* Returns f(z, n) + 1. */
float _Complex fx_complex_float_apply(float _Complex (*f)(float _Complex, int), float _Complex z, int n) {
    return f(z, n) + 1;
}

/* Returns 2 * f(z): on x86_64 the result comes back in the x87 registers st0 and st1. */
long double _Complex fx_complex_long_apply(long double _Complex (*f)(long double _Complex), long double _Complex z) {
    return 2 * f(z);
}

/* The parts of a long double _Complex, as doubles. */
double fx_complex_long_real(long double _Complex z) { return (double)creall(z); }
double fx_complex_long_imaginary(long double _Complex z) { return (double)cimagl(z); }
