/* Callbacks of six to twelve parameters (the arity table): C loops, plain C functions and raw libffi
   closures with C handlers, as for the four benchmark signatures. Each function returns its first
   argument plus its last, so every argument's register or stack slot is passed and the last one read. */
#include "include/DelegateKitBenchmarkSupport.h"

#include <ffi.h>
#include <pthread.h>

typedef int64_t (*i64x6_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
typedef int64_t (*i64x7_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
typedef int64_t (*i64x12_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t);
typedef double (*f64x6_fn)(double, double, double, double, double, double);
typedef double (*f64x7_fn)(double, double, double, double, double, double, double);
/* libxml2's startElementNsSAX2Func, with `void *` for its `const xmlChar *` and `const xmlChar **`. */
typedef void (*sax9_fn)(void *, const void *, const void *, const void *, int32_t, const void *, int32_t, int32_t,
                        const void *);

__attribute__((noinline)) static int64_t direct_i64x6(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f) {
    (void)b; (void)c; (void)d; (void)e;
    return a + f;
}
__attribute__((noinline)) static int64_t direct_i64x7(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
                                                      int64_t g) {
    (void)b; (void)c; (void)d; (void)e; (void)f;
    return a + g;
}
__attribute__((noinline)) static int64_t direct_i64x12(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
                                                       int64_t g, int64_t h, int64_t i, int64_t j, int64_t k, int64_t l) {
    (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)h; (void)i; (void)j; (void)k;
    return a + l;
}
__attribute__((noinline)) static double direct_f64x6(double a, double b, double c, double d, double e, double f) {
    (void)b; (void)c; (void)d; (void)e;
    return a + f;
}
__attribute__((noinline)) static double direct_f64x7(double a, double b, double c, double d, double e, double f, double g) {
    (void)b; (void)c; (void)d; (void)e; (void)f;
    return a + g;
}
/* What a SAX handler does with an element: counts it and its attributes into the context. */
__attribute__((noinline)) static void direct_sax9(void *context, const void *localname, const void *prefix,
                                                  const void *uri, int32_t namespaces, const void *namespace_list,
                                                  int32_t attributes, int32_t defaulted, const void *attribute_list) {
    (void)localname; (void)prefix; (void)uri; (void)namespaces; (void)namespace_list; (void)defaulted;
    *(int64_t *)context += attributes + (attribute_list != 0);
}

const void *bench_arity_direct(int arity) {
    switch (arity) {
    case BENCH_I64X6: return (const void *)direct_i64x6;
    case BENCH_I64X7: return (const void *)direct_i64x7;
    case BENCH_SAX9: return (const void *)direct_sax9;
    case BENCH_I64X12: return (const void *)direct_i64x12;
    case BENCH_F64X6: return (const void *)direct_f64x6;
    default: return (const void *)direct_f64x7;
    }
}

static void raw_first_plus_last_i64(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)data;
    *(ffi_sarg *)ret = *(int64_t *)args[0] + *(int64_t *)args[cif->nargs - 1];
}
static void raw_first_plus_last_f64(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)data;
    *(double *)ret = *(double *)args[0] + *(double *)args[cif->nargs - 1];
}
static void raw_sax9(ffi_cif *cif, void *ret, void **args, void *data) {
    (void)cif; (void)ret; (void)data;
    *(int64_t *)*(void **)args[0] += *(int32_t *)args[6] + (*(void **)args[8] != 0);
}

static ffi_cif arity_cifs[BENCH_ARITY_COUNT];
static ffi_type *i64_types[12], *f64_types[7], *sax9_types[9];
static pthread_once_t arity_once = PTHREAD_ONCE_INIT;

static void prepare_arity_cifs(void) {
    for (int i = 0; i < 12; i++) i64_types[i] = &ffi_type_sint64;
    for (int i = 0; i < 7; i++) f64_types[i] = &ffi_type_double;
    for (int i = 0; i < 9; i++) sax9_types[i] = &ffi_type_pointer;
    sax9_types[4] = sax9_types[6] = sax9_types[7] = &ffi_type_sint32;
    ffi_prep_cif(&arity_cifs[BENCH_I64X6], FFI_DEFAULT_ABI, 6, &ffi_type_sint64, i64_types);
    ffi_prep_cif(&arity_cifs[BENCH_I64X7], FFI_DEFAULT_ABI, 7, &ffi_type_sint64, i64_types);
    ffi_prep_cif(&arity_cifs[BENCH_SAX9], FFI_DEFAULT_ABI, 9, &ffi_type_void, sax9_types);
    ffi_prep_cif(&arity_cifs[BENCH_I64X12], FFI_DEFAULT_ABI, 12, &ffi_type_sint64, i64_types);
    ffi_prep_cif(&arity_cifs[BENCH_F64X6], FFI_DEFAULT_ABI, 6, &ffi_type_double, f64_types);
    ffi_prep_cif(&arity_cifs[BENCH_F64X7], FFI_DEFAULT_ABI, 7, &ffi_type_double, f64_types);
}

void *bench_arity_raw_closure(int arity, void **code) {
    pthread_once(&arity_once, prepare_arity_cifs);
    void (*handler)(ffi_cif *, void *, void **, void *) =
        arity == BENCH_SAX9 ? raw_sax9
        : arity == BENCH_F64X6 || arity == BENCH_F64X7 ? raw_first_plus_last_f64
                                                         : raw_first_plus_last_i64;
    ffi_closure *closure = ffi_closure_alloc(sizeof(ffi_closure), code);
    if (closure == NULL) return NULL;
    if (ffi_prep_closure_loc(closure, &arity_cifs[arity], handler, NULL, *code) != FFI_OK) {
        ffi_closure_free(closure);
        return NULL;
    }
    return closure;
}

double bench_arity_loop(int arity, const void *f, int64_t n) {
    int64_t acc = 0;
    double facc = 0;
    switch (arity) {
    case BENCH_I64X6:
        for (int64_t i = 0; i < n; i++) acc = ((i64x6_fn)f)(acc, 1, 2, 3, 4, i);
        return (double)acc;
    case BENCH_I64X7:
        for (int64_t i = 0; i < n; i++) acc = ((i64x7_fn)f)(acc, 1, 2, 3, 4, 5, i);
        return (double)acc;
    case BENCH_SAX9: {
        static const char *attributes[] = {"id", 0};
        for (int64_t i = 0; i < n; i++)
            ((sax9_fn)f)(&acc, "element", 0, "urn:x", 0, 0, (int32_t)(i & 7), 0, (i & 1) ? attributes : 0);
        return (double)acc;
    }
    case BENCH_I64X12:
        for (int64_t i = 0; i < n; i++) acc = ((i64x12_fn)f)(acc, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, i);
        return (double)acc;
    case BENCH_F64X6:
        for (int64_t i = 0; i < n; i++) facc = ((f64x6_fn)f)(facc, 1, 2, 3, 4, 0.5);
        return facc;
    default:
        for (int64_t i = 0; i < n; i++) facc = ((f64x7_fn)f)(facc, 1, 2, 3, 4, 5, 0.5);
        return facc;
    }
}
