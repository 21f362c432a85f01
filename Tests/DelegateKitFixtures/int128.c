/* 128-bit integers by value: passed in two integer registers (or a pair on the stack) on x86_64 and
   aarch64. The header does not declare these (the tests reach them through fx_function), so that Swift's
   importer never has to read an __int128 prototype. */

/* Returns a * b + c. */
__int128 fx_int128_muladd(__int128 a, __int128 b, __int128 c) { return a * b + c; }

/* Returns f(x, shift) + 1: C calls the closure and uses what it returns. */
unsigned __int128 fx_uint128_apply(unsigned __int128 (*f)(unsigned __int128, int), unsigned __int128 x, int shift) {
    return f(x, shift) + 1;
}
