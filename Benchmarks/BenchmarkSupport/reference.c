#define _GNU_SOURCE
#include "include/DelegateKitBenchmarkSupport.h"

#include <ffi.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* ---- The floor: plain C, called through a pointer ---- */
__attribute__((noinline)) static int64_t direct_i64(int64_t a, int64_t b) { return a + b; }
__attribute__((noinline)) static double direct_f64(double a, double b) { return a + b; }
__attribute__((noinline)) static int32_t direct_mixed6(void *p, int32_t a, int64_t b, double c, float d, void *q) {
    return (int32_t)(a + (int32_t)b + (int32_t)c + (int32_t)d) + (p == q);
}
__attribute__((noinline)) static bench_s32 direct_s32(bench_s32 s) {
    bench_s32 r = {s.b, s.c, s.d, s.a + 1};
    return r;
}

const void *bench_direct(int signature) {
    switch (signature) {
    case 0: return (const void *)direct_i64;
    case 1: return (const void *)direct_f64;
    case 2: return (const void *)direct_mixed6;
    default: return (const void *)direct_s32;
    }
}

/* ---- Raw libffi with C handlers ---- */
static void raw_i64(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)cif; (void)data;
    *(ffi_sarg *)ret = *(int64_t *)args[0] + *(int64_t *)args[1];
}
static void raw_f64(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)cif; (void)data;
    *(double *)ret = *(double *)args[0] + *(double *)args[1];
}
static void raw_mixed6(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)cif; (void)data;
    void *p = *(void **)args[0], *q = *(void **)args[5];
    int32_t a = *(int32_t *)args[1];
    int64_t b = *(int64_t *)args[2];
    double c = *(double *)args[3];
    float d = *(float *)args[4];
    *(ffi_sarg *)ret = (int32_t)(a + (int32_t)b + (int32_t)c + (int32_t)d) + (p == q);
}
static void raw_s32(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)cif; (void)data;
    bench_s32 s = *(bench_s32 *)args[0];
    bench_s32 r = {s.b, s.c, s.d, s.a + 1};
    *(bench_s32 *)ret = r;
}

static ffi_cif cifs[4];
static ffi_type *s32_elements[5];
static ffi_type s32_type;
static ffi_type *i64_args[2], *f64_args[2], *mixed6_args[6], *s32_args[1];
static pthread_once_t cifs_once = PTHREAD_ONCE_INIT;

static void prepare_cifs(void) {
    i64_args[0] = i64_args[1] = &ffi_type_sint64;
    ffi_prep_cif(&cifs[0], FFI_DEFAULT_ABI, 2, &ffi_type_sint64, i64_args);
    f64_args[0] = f64_args[1] = &ffi_type_double;
    ffi_prep_cif(&cifs[1], FFI_DEFAULT_ABI, 2, &ffi_type_double, f64_args);
    mixed6_args[0] = &ffi_type_pointer; mixed6_args[1] = &ffi_type_sint32; mixed6_args[2] = &ffi_type_sint64;
    mixed6_args[3] = &ffi_type_double; mixed6_args[4] = &ffi_type_float; mixed6_args[5] = &ffi_type_pointer;
    ffi_prep_cif(&cifs[2], FFI_DEFAULT_ABI, 6, &ffi_type_sint32, mixed6_args);
    for (int i = 0; i < 4; i++) s32_elements[i] = &ffi_type_double;
    s32_elements[4] = NULL;
    s32_type.size = 0; s32_type.alignment = 0; s32_type.type = FFI_TYPE_STRUCT; s32_type.elements = s32_elements;
    s32_args[0] = &s32_type;
    ffi_prep_cif(&cifs[3], FFI_DEFAULT_ABI, 1, &s32_type, s32_args);
}

void *bench_raw_closure(int signature, void **code) {
    pthread_once(&cifs_once, prepare_cifs);
    static void (*const handlers[4])(ffi_cif *, void *, void **, void *) = {raw_i64, raw_f64, raw_mixed6, raw_s32};
    ffi_closure *closure = ffi_closure_alloc(sizeof(ffi_closure), code);
    if (closure == NULL) return NULL;
    if (ffi_prep_closure_loc(closure, &cifs[signature], handlers[signature], NULL, *code) != FFI_OK) {
        ffi_closure_free(closure);
        return NULL;
    }
    return closure;
}

void bench_raw_closure_free(void *closure) { ffi_closure_free(closure); }

int64_t bench_raw_create_free(int64_t n, int keep_alive_count, void **kept) {
    pthread_once(&cifs_once, prepare_cifs);
    int64_t start = bench_now();
    for (int64_t i = 0; i < n; i++) {
        void *code;
        void *closure = bench_raw_closure(0, &code);
        if (i < keep_alive_count) kept[i] = closure; else bench_raw_closure_free(closure);
    }
    return bench_now() - start;
}

/* ---- Threads ---- */
typedef struct { const void *f; int64_t n; } thread_work;

static void *run_loop(void *argument) {
    thread_work *work = argument;
    bench_loop_i64(work->f, work->n);
    return NULL;
}

int64_t bench_threads_i64(const void *f, int64_t n, int threads) {
    pthread_t ids[16];
    thread_work work = {f, n};
    if (threads > 16) threads = 16;
    int64_t start = bench_now();
    for (int i = 0; i < threads; i++) pthread_create(&ids[i], NULL, run_loop, &work);
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    return bench_now() - start;
}

int64_t bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t bench_cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}
