/* The loops are also compiled alone into a shared library for the Python peers. */
#include "include/DelegateKitBenchmarkSupport.h"

#include <ffi.h>
#include <stdarg.h>

int64_t bench_loop_i64(const void *f, int64_t n) {
    bench_i64_fn fn = (bench_i64_fn)f;
    int64_t acc = 0;
    for (int64_t i = 0; i < n; i++) acc = fn(acc, i);
    return acc;
}

double bench_loop_f64(const void *f, int64_t n) {
    bench_f64_fn fn = (bench_f64_fn)f;
    double acc = 0;
    for (int64_t i = 0; i < n; i++) acc = fn(acc, 0.5);
    return acc;
}

int32_t bench_loop_mixed6(const void *f, int64_t n) {
    bench_mixed6_fn fn = (bench_mixed6_fn)f;
    int32_t acc = 0;
    for (int64_t i = 0; i < n; i++) acc = fn(&acc, acc, i, 1.5, 2.5f, (void *)0);
    return acc;
}

bench_s32 bench_loop_s32(const void *f, int64_t n) {
    bench_s32_fn fn = (bench_s32_fn)f;
    bench_s32 acc = {0, 1, 2, 3};
    for (int64_t i = 0; i < n; i++) acc = fn(acc);
    return acc;
}

int64_t bench_loop_context_i64(const void *f, void *context, int64_t n) {
    int64_t (*fn)(void *, int64_t, int64_t) = (int64_t (*)(void *, int64_t, int64_t))f;
    int64_t acc = 0;
    for (int64_t i = 0; i < n; i++) acc = fn(context, acc, i);
    return acc;
}

double bench_loop_context_f64(const void *f, void *context, int64_t n) {
    double (*fn)(void *, double, double) = (double (*)(void *, double, double))f;
    double acc = 0;
    for (int64_t i = 0; i < n; i++) acc = fn(context, acc, 0.5);
    return acc;
}

int32_t bench_loop_context_mixed6(const void *f, void *context, int64_t n) {
    int32_t (*fn)(void *, void *, int32_t, int64_t, double, float, void *) =
        (int32_t (*)(void *, void *, int32_t, int64_t, double, float, void *))f;
    int32_t acc = 0;
    for (int64_t i = 0; i < n; i++) acc = fn(context, &acc, acc, i, 1.5, 2.5f, (void *)0);
    return acc;
}

bench_s32 bench_loop_context_s32(const void *f, void *context, int64_t n) {
    bench_s32 (*fn)(void *, bench_s32) = (bench_s32 (*)(void *, bench_s32))f;
    bench_s32 acc = {0, 1, 2, 3};
    for (int64_t i = 0; i < n; i++) acc = fn(context, acc);
    return acc;
}

/* ---- Functions Swift calls (the "Calling C" section), here so Python's ctypes calls the same code. ---- */
int64_t bench_add_i64(int64_t a, int64_t b) { return a + b; }
int64_t bench_add8_i64(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h) {
    return a + b + c + d + e + f + g + h;
}
double bench_add_f64(double a, double b) { return a + b; }
bench_s32 bench_rotate_s32(bench_s32 s) {
    bench_s32 r = {s.b, s.c, s.d, s.a + 1};
    return r;
}

int64_t bench_sum_variadic(int count, ...) {
    va_list arguments;
    va_start(arguments, count);
    int64_t sum = 0;
    for (int i = 0; i < count; i++) sum += va_arg(arguments, int64_t);
    va_end(arguments);
    return sum;
}

const void *bench_sum_variadic_address(void) { return (const void *)bench_sum_variadic; }

int64_t bench_ffi_call_i64(int64_t n) {
    static ffi_cif cif;
    static ffi_type *types[2];
    static int prepared;
    if (!prepared) {
        types[0] = &ffi_type_sint64;
        types[1] = &ffi_type_sint64;
        ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint64, types);
        prepared = 1;
    }
    int64_t acc = 0, one = 1;
    void *values[2] = {&acc, &one};
    for (int64_t i = 0; i < n; i++) {
        ffi_arg result;
        ffi_call(&cif, (void (*)(void))bench_add_i64, &result, values);
        acc = (int64_t)result;
    }
    return acc;
}

/* bench_sum_variadic(2, acc, 1) n times through ffi_call from C, its cif prepared once with
   ffi_prep_cif_var (one named int, two int64_t after it): what a variadic call costs raw libffi. Returns
   the last result, which is n. */
int64_t bench_ffi_call_variadic(int64_t n) {
    static ffi_cif cif;
    static ffi_type *types[3];
    static int prepared;
    if (!prepared) {
        types[0] = &ffi_type_sint32;
        types[1] = &ffi_type_sint64;
        types[2] = &ffi_type_sint64;
        ffi_prep_cif_var(&cif, FFI_DEFAULT_ABI, 1, 3, &ffi_type_sint64, types);
        prepared = 1;
    }
    int count = 2;
    int64_t acc = 0, one = 1;
    void *values[3] = {&count, &acc, &one};
    for (int64_t i = 0; i < n; i++) {
        ffi_arg result;
        ffi_call(&cif, (void (*)(void))bench_sum_variadic, &result, values);
        acc = (int64_t)result;
    }
    return acc;
}

/* bench_rotate_s32 n times through ffi_call from C, each call given the previous result: a struct passed
   and returned in memory. Returns the sum of the last result's fields, which is n. */
int64_t bench_ffi_call_s32(int64_t n) {
    static ffi_cif cif;
    static ffi_type *fields[5], s32, *types[1];
    static int prepared;
    if (!prepared) {
        for (int i = 0; i < 4; i++) fields[i] = &ffi_type_double;
        s32.type = FFI_TYPE_STRUCT;
        s32.elements = fields;
        types[0] = &s32;
        ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 1, &s32, types);
        prepared = 1;
    }
    bench_s32 acc = {0, 0, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        /* Each call's argument from a copy of its own, as CFunction lays its values out for ffi_call. */
        bench_s32 argument = acc, result;
        void *values[1] = {&argument};
        ffi_call(&cif, (void (*)(void))bench_rotate_s32, &result, values);
        acc = result;
    }
    return (int64_t)(acc.a + acc.b + acc.c + acc.d);
}
