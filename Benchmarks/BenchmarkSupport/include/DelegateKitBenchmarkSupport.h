#ifndef DELEGATEKIT_BENCHMARK_SUPPORT_H
#define DELEGATEKIT_BENCHMARK_SUPPORT_H

/* The C side of delegatekit-bench: loops that call a function pointer the way a C library does, the
   reference paths (a direct C function, raw libffi with a C handler), and measuring helpers. */

#include <stddef.h>
#include <stdint.h>

typedef struct { double a, b, c, d; } bench_s32;

/* The four benchmark signatures. */
typedef int64_t (*bench_i64_fn)(int64_t, int64_t);
typedef double (*bench_f64_fn)(double, double);
typedef int32_t (*bench_mixed6_fn)(void *, int32_t, int64_t, double, float, void *);
typedef bench_s32 (*bench_s32_fn)(bench_s32);

/* Call `f` n times, feeding each result into the next call so nothing can be skipped. */
int64_t bench_loop_i64(const void *f, int64_t n);
double bench_loop_f64(const void *f, int64_t n);
int32_t bench_loop_mixed6(const void *f, int64_t n);
bench_s32 bench_loop_s32(const void *f, int64_t n);

/* The same loops for a hand-written thunk that takes a context pointer first. */
int64_t bench_loop_context_i64(const void *f, void *context, int64_t n);
double bench_loop_context_f64(const void *f, void *context, int64_t n);
int32_t bench_loop_context_mixed6(const void *f, void *context, int64_t n);
bench_s32 bench_loop_context_s32(const void *f, void *context, int64_t n);

/* Plain C implementations, called through a pointer: the floor. */
const void *bench_direct(int signature); /* 0 i64, 1 f64, 2 mixed6, 3 s32 */

/* Raw libffi closures whose handler is C: what any libffi wrapper starts from. */
void *bench_raw_closure(int signature, void **code);
void bench_raw_closure_free(void *closure);
/* Allocates, prepares and frees `n` raw closures of signature i64; returns nanoseconds in all. */
int64_t bench_raw_create_free(int64_t n, int keep_alive_count, void **kept);

/* The arity table's callbacks (arities.c): `int64_t (int64_t × 6, 7, 12)`, `double (double × 6, 7)` and
   libxml2's startElementNs, `void (void *, const xmlChar * × 3, int, const xmlChar **, int, int,
   const xmlChar **)`. Each returns its first argument plus its last; the SAX handler adds its attribute
   count, plus one when it has an attribute array, to the int64_t its first argument points at. */
enum { BENCH_I64X6, BENCH_I64X7, BENCH_SAX9, BENCH_I64X12, BENCH_F64X6, BENCH_F64X7, BENCH_ARITY_COUNT };
const void *bench_arity_direct(int arity);
void *bench_arity_raw_closure(int arity, void **code);
/* Calls `f` n times, each call fed the previous result (the SAX handler: a counter); returns the last. */
double bench_arity_loop(int arity, const void *f, int64_t n);

/* Runs bench_loop_i64(f, n) on `threads` threads at once; returns the wall-clock nanoseconds. */
int64_t bench_threads_i64(const void *f, int64_t n, int threads);

/* What the "Calling C" section calls from Swift: plain functions, a variadic one (adds `count` int64_t
   arguments), and raw libffi calling bench_add_i64(acc, 1) n times from C (ffi_call's own floor). */
int64_t bench_add_i64(int64_t a, int64_t b);
/* Eight arguments: more than the registers take, so a typed CFunction call goes through libffi. */
int64_t bench_add8_i64(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h);
double bench_add_f64(double a, double b);
/* (a, b, c, d) -> (b, c, d, a + 1): a struct passed and returned in memory. */
bench_s32 bench_rotate_s32(bench_s32 s);
int64_t bench_ffi_call_s32(int64_t n);
int64_t bench_sum_variadic(int count, ...);
const void *bench_sum_variadic_address(void); /* Swift does not import variadic functions */
int64_t bench_ffi_call_i64(int64_t n);
/* bench_sum_variadic(2, acc, 1) n times through ffi_call, its cif from ffi_prep_cif_var, made once. */
int64_t bench_ffi_call_variadic(int64_t n);

/* Monotonic clock in nanoseconds. */
int64_t bench_now(void);

/* This process's CPU time (every thread, user and system) in nanoseconds: what a burst of creations cost
   it, whatever else the machine was doing meanwhile. */
int64_t bench_cpu_now(void);

/* Bytes of heap in use (mallinfo2's uordblks + hblkhd). */
size_t bench_heap_in_use(void);

/* Gives the heap's free memory back to the system (malloc_trim(0)). */
void bench_trim_heap(void);

/* The mappings of this process: the lines of /proc/self/maps. */
int64_t bench_mapping_count(void);

/* Heap allocations (malloc, calloc, realloc, aligned allocations) made by this process so far. */
int64_t bench_allocations(void);

/* The qsort benchmark: a plain C three-way comparator of int32_t, and glibc's qsort of `count` int32_t
   with the comparator at `compare` (any C function pointer of qsort's comparator type); returns the
   nanoseconds the sort took. */
int bench_compare_int32(const void *a, const void *b);
int64_t bench_qsort_int32(int32_t *data, size_t count, const void *compare);


/* ---- The callback shapes C libraries use most (shapes.c) ---- */
enum {
    BENCH_SHAPE_COMPARATOR,   /* int (const void *, const void *) */
    BENCH_SHAPE_DESTROY,      /* void (void *) */
    BENCH_SHAPE_CONTEXT,      /* int (void *) */
    BENCH_SHAPE_THREAD_START, /* void *(void *) */
    BENCH_SHAPE_BUSY,         /* int (void *, int) */
    BENCH_SHAPE_FOREACH,      /* void (void *, void *) */
};
/* The plain C function of a shape. */
const void *bench_shape_direct(int shape);
/* Calls `f`, of the shape, n times as a C library would; returns a checksum. */
int64_t bench_shape_loop(int shape, const void *f, int64_t n);
/* Zero, which the compiler cannot see: for closures that must capture a value. */
int64_t bench_opaque_zero(void);

#endif
