#define _GNU_SOURCE
#include "DelegateKitFixtures.h"

#include <stdarg.h>

#include <ftw.h>
#include <pthread.h>
#include <stdlib.h>
#include <float.h>
#include <string.h>

/* ---- Scalars ---- */
#define FX_DEFINE_SCALAR(NAME, T) \
    T fx_call_##NAME(const void *f, T a, T b) { return ((T (*)(T, T))f)(a, b); }
FX_SCALARS(FX_DEFINE_SCALAR)

#define FX_DEFINE_AFTER_STRUCT(NAME, T) \
    T fx_after_struct_##NAME(fx_pad pad, T a, T b) { (void)pad; return fx_ref_##NAME(a, b); }
FX_SCALARS(FX_DEFINE_AFTER_STRUCT)

int64_t fx_call_dirty_narrow(const void *f) {
    /* The same registers a call of int64_t (int8_t, int16_t, bool) uses, passed as whole words. */
    return ((int64_t (*)(uint64_t, uint64_t, uint64_t))f)(0xdeadbeef000000ffULL, 0x123456789abc8001ULL,
                                                          0xffffffffffffff01ULL);
}

bool fx_ref_bool(bool a, bool b) { return a != b; }
int8_t fx_ref_i8(int8_t a, int8_t b) { return (int8_t)(a - b); }
uint8_t fx_ref_u8(uint8_t a, uint8_t b) { return (uint8_t)(a - b); }
int16_t fx_ref_i16(int16_t a, int16_t b) { return (int16_t)(a - b); }
uint16_t fx_ref_u16(uint16_t a, uint16_t b) { return (uint16_t)(a - b); }
int32_t fx_ref_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
uint32_t fx_ref_u32(uint32_t a, uint32_t b) { return a - b; }
int64_t fx_ref_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
uint64_t fx_ref_u64(uint64_t a, uint64_t b) { return a - b; }
float fx_ref_f32(float a, float b) { return a - b; }
double fx_ref_f64(double a, double b) { return a - b; }
long double fx_ref_ld(long double a, long double b) { return a - b; }
void *fx_ref_ptr(void *a, void *b) { return (char *)a + ((uintptr_t)b & 0xff); }

/* ---- Many arguments ---- */
typedef double (*fx_many16_fn)(int8_t, double, int16_t, float, int32_t, double, int64_t, float,
                               uint8_t, double, uint16_t, float, uint32_t, double, uint64_t, float);
#define FX_MANY16_ARGS (int8_t)-7, 1.5, (int16_t)-300, 2.25f, -70000, -3.125, (int64_t)-5000000000LL, 4.5f, \
    (uint8_t)200, 0.0625, (uint16_t)60000, -8.75f, 4000000000u, 1024.5, (uint64_t)9000000000ULL, 0.5f
static double fx_many16_formula(int8_t a1, double a2, int16_t a3, float a4, int32_t a5, double a6, int64_t a7,
                                float a8, uint8_t a9, double a10, uint16_t a11, float a12, uint32_t a13,
                                double a14, uint64_t a15, float a16) {
    return a1 * 1.0 + a2 * 2 + a3 * 3.0 + a4 * 4.0 + a5 * 5.0 + a6 * 6 + (double)a7 * 7 + a8 * 8.0 + a9 * 9.0
        + a10 * 10 + a11 * 11.0 + a12 * 12.0 + (double)a13 * 13 + a14 * 14 + (double)a15 * 15 + a16 * 16.0;
}
double fx_call_many16(const void *f) { return ((fx_many16_fn)f)(FX_MANY16_ARGS); }
double fx_many16(int8_t a1, double a2, int16_t a3, float a4, int32_t a5, double a6, int64_t a7, float a8,
                 uint8_t a9, double a10, uint16_t a11, float a12, uint32_t a13, double a14, uint64_t a15, float a16) {
    return fx_many16_formula(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16);
}

double fx_six_long_floats(fx_long_float a, fx_long_float b, fx_long_float c, fx_long_float d, fx_long_float e,
                          fx_long_float f) {
    fx_long_float all[] = {a, b, c, d, e, f};
    double sum = 0;
    for (int index = 0; index < 6; index++) sum += (index + 1) * ((double)all[index].n * 1000 + all[index].f);
    return sum;
}

double fx_chars_float_pair(char a, char b, char c, char d, char e, float f, fx_char_double g) {
    return a + 2.0 * b + 3.0 * c + 4.0 * d + 5.0 * e + 6.0 * f + 7.0 * g.c + 8.0 * g.d;
}

const char *fx_format(void) { return "%d|%ld|%.17g|%.9g|%c|%hd|%u|%s|%p|%hhu|%d|%.21Lg|%llu|%hu|%hhd"; }

int fx_format_reference(char *buffer, size_t size, int i, long l, double d, float f, char c, short s,
                        unsigned u, const char *text, void *p, unsigned char uc, bool b, long double ld,
                        unsigned long long ull, unsigned short us, signed char sc) {
    return snprintf(buffer, size, fx_format(), i, l, d, f, c, s, u, text, p, uc, b, ld, ull, us, sc);
}

double fx_sum_variadic(const char *kinds, ...) {
    va_list arguments;
    va_start(arguments, kinds);
    double sum = 0;
    for (const char *kind = kinds; *kind; kind++) {
        switch (*kind) {
        case 'i': sum += va_arg(arguments, int); break;
        case 'l': sum += (double)va_arg(arguments, long); break;
        case 'd': sum += va_arg(arguments, double); break;
        case 'p': sum += (double)(uintptr_t)va_arg(arguments, void *); break;
        case 'L': sum += (double)va_arg(arguments, long double); break;
        }
    }
    va_end(arguments);
    return sum;
}
double fx_ref_many16(void) { return fx_many16_formula(FX_MANY16_ARGS); }

typedef double (*fx_spill20_fn)(int64_t, double, int64_t, double, int64_t, double, int64_t, double, int64_t, double,
                                int64_t, double, int64_t, double, int64_t, double, int64_t, double, int64_t, double);
double fx_call_spill20(const void *f) {
    return ((fx_spill20_fn)f)(1, 0.5, -2, 1.5, 3, -2.5, -4, 3.5, 5, 4.5, -6, -5.5, 7, 6.5, -8, 7.5, 9, -8.5, -10, 9.5);
}
double fx_ref_spill20(void) {
    int64_t ints[10] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10};
    double doubles[10] = {0.5, 1.5, -2.5, 3.5, 4.5, -5.5, 6.5, 7.5, -8.5, 9.5};
    double sum = 0;
    for (int i = 0; i < 10; i++) sum += (double)ints[i] * (2 * i + 1) + doubles[i] * (2 * i + 2);
    return sum;
}

int32_t fx_call_mixed6(const void *f, void *p, int32_t a, int64_t b, double c, float d, void *q) {
    return ((int32_t (*)(void *, int32_t, int64_t, double, float, void *))f)(p, a, b, c, d, q);
}

void fx_call_void_i64(const void *f, int64_t value) { ((void (*)(int64_t))f)(value); }

/* ---- Structs ---- */
#define F(S, MEMBER, KIND) {offsetof(S, MEMBER), KIND}
static const fx_field S1_fields[] = {F(S1, a, FX_U8)};
static const fx_field S2_fields[] = {F(S2, a, FX_U8), F(S2, b, FX_U8)};
static const fx_field S3_fields[] = {F(S3, a, FX_U8), F(S3, b, FX_U8), F(S3, c, FX_U8)};
static const fx_field S4_fields[] = {F(S4, a, FX_U16), F(S4, b, FX_U16)};
static const fx_field S5_fields[] = {F(S5, a[0], FX_U8), F(S5, a[1], FX_U8), F(S5, a[2], FX_U8), F(S5, a[3], FX_U8),
                                     F(S5, a[4], FX_U8)};
static const fx_field S6_fields[] = {F(S6, a, FX_U16), F(S6, b, FX_U16), F(S6, c, FX_U16)};
static const fx_field S7_fields[] = {F(S7, a[0], FX_U8), F(S7, a[1], FX_U8), F(S7, a[2], FX_U8), F(S7, a[3], FX_U8),
                                     F(S7, a[4], FX_U8), F(S7, a[5], FX_U8), F(S7, a[6], FX_U8)};
static const fx_field S8_fields[] = {F(S8, a, FX_I32), F(S8, b, FX_F32)};
static const fx_field SFF_fields[] = {F(SFF, a, FX_F32), F(SFF, b, FX_F32)};
static const fx_field S12_fields[] = {F(S12, a, FX_F32), F(S12, b, FX_F32), F(S12, c, FX_F32)};
static const fx_field SDD_fields[] = {F(SDD, a, FX_F64), F(SDD, b, FX_F64)};
static const fx_field SLD16_fields[] = {F(SLD16, a, FX_I64), F(SLD16, b, FX_F64)};
static const fx_field SPair_fields[] = {F(SPair, tag, FX_U8), F(SPair, value, FX_F64)};
#define B(S, I) F(S, a[I], FX_U8)
static const fx_field S17_fields[] = {B(S17, 0), B(S17, 1), B(S17, 2), B(S17, 3), B(S17, 4), B(S17, 5), B(S17, 6),
    B(S17, 7), B(S17, 8), B(S17, 9), B(S17, 10), B(S17, 11), B(S17, 12), B(S17, 13), B(S17, 14), B(S17, 15), B(S17, 16)};
static const fx_field S24_fields[] = {F(S24, a, FX_F64), F(S24, b, FX_I64), F(S24, c, FX_F32)};
static const fx_field S32_fields[] = {F(S32, a, FX_F64), F(S32, b, FX_F64), F(S32, c, FX_F64), F(S32, d, FX_F64)};
static const fx_field S33_fields[] = {B(S33, 0), B(S33, 1), B(S33, 2), B(S33, 3), B(S33, 4), B(S33, 5), B(S33, 6),
    B(S33, 7), B(S33, 8), B(S33, 9), B(S33, 10), B(S33, 11), B(S33, 12), B(S33, 13), B(S33, 14), B(S33, 15),
    B(S33, 16), B(S33, 17), B(S33, 18), B(S33, 19), B(S33, 20), B(S33, 21), B(S33, 22), B(S33, 23), B(S33, 24),
    B(S33, 25), B(S33, 26), B(S33, 27), B(S33, 28), B(S33, 29), B(S33, 30), B(S33, 31), B(S33, 32)};
static const fx_field S64_fields[] = {F(S64, a[0], FX_I64), F(S64, a[1], FX_I64), F(S64, a[2], FX_I64),
    F(S64, a[3], FX_I64), F(S64, a[4], FX_I64), F(S64, a[5], FX_I64), F(S64, a[6], FX_I64), F(S64, a[7], FX_I64)};
static const fx_field N1_fields[] = {F(N1, inner.a, FX_U8), F(N1, inner.b, FX_U8), F(N1, d, FX_F64)};
static const fx_field N2_fields[] = {F(N2, point.x, FX_F32), F(N2, point.y, FX_F32), F(N2, id, FX_I64),
                                     F(N2, tag.a, FX_U8), F(N2, tag.b, FX_U8), F(N2, tag.c, FX_U8)};
static const fx_field N3_fields[] = {F(N3, first.a, FX_F64), F(N3, first.b, FX_F64), F(N3, second.a, FX_F64),
                                     F(N3, second.b, FX_F64)};
static const fx_field SLongDouble_fields[] = {F(SLongDouble, value, FX_LD), F(SLongDouble, tag, FX_I32)};

/* The formula both sides compute: field-wise a + b (unsigned wrap-around for integers). */
static void fx_combine(const fx_field *fields, size_t count, const void *a, const void *b, void *out) {
    for (size_t i = 0; i < count; i++) {
        const char *x = (const char *)a + fields[i].offset, *y = (const char *)b + fields[i].offset;
        char *r = (char *)out + fields[i].offset;
#define COMBINE(T, U) { T p, q; memcpy(&p, x, sizeof p); memcpy(&q, y, sizeof q); T s = (T)((U)p + (U)q); memcpy(r, &s, sizeof s); } break
        switch (fields[i].kind) {
        case FX_U8: COMBINE(uint8_t, uint8_t);
        case FX_U16: COMBINE(uint16_t, uint16_t);
        case FX_I32: COMBINE(int32_t, uint32_t);
        case FX_I64: COMBINE(int64_t, uint64_t);
        case FX_F32: COMBINE(float, float);
        case FX_F64: COMBINE(double, double);
        case FX_LD: COMBINE(long double, long double);
        }
#undef COMBINE
    }
}

void fx_long_double_store(void *out, int64_t n) { long double v = (long double)n / 16; memcpy(out, &v, sizeof v); }
void fx_long_double_add(const void *a, const void *b, void *out) {
    static const fx_field field = {0, FX_LD};
    fx_combine(&field, 1, a, b, out);
}
size_t fx_long_double_value_bytes(void) { return LDBL_MANT_DIG == 64 ? 10 : sizeof(long double); }

#define FX_DEFINE_STRUCT(S) \
    S fx_call_##S(const void *f, S a, S b) { return ((S (*)(S, S))f)(a, b); } \
    S fx_ref_##S(S a, S b) { \
        S r; memset(&r, 0, sizeof r); \
        fx_combine(S##_fields, sizeof S##_fields / sizeof S##_fields[0], &a, &b, &r); \
        return r; \
    } \
    const fx_field *fx_fields_##S(size_t *count) { *count = sizeof S##_fields / sizeof S##_fields[0]; return S##_fields; } \
    size_t fx_sizeof_##S(void) { return sizeof(S); } \
    size_t fx_alignof_##S(void) { return _Alignof(S); }
FX_STRUCTS(FX_DEFINE_STRUCT)

/* ---- The plugin library ---- */
double fx_plugin_run(const fx_plugin *plugin, void *context, const int64_t *values, size_t count, uint32_t *called) {
    *called = 0;
    if (plugin->start == NULL) return -1;
    *called |= FX_CALLED_START;
    if (plugin->start(context) != 0) return -1;
    double total = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t value = values[i];
        if (plugin->transform) { *called |= FX_CALLED_TRANSFORM; value = plugin->transform(context, value); }
        double weight = 1;
        if (plugin->weigh) {
            *called |= FX_CALLED_WEIGH;
            fx_point point = {(float)i, (float)value};
            weight = plugin->weigh(context, point);
        }
        total += (double)value * weight;
    }
    if (plugin->log) {
        *called |= FX_CALLED_LOG;
        char message[64];
        snprintf(message, sizeof message, "processed %zu values", count);
        plugin->log(context, message);
    }
    return total;
}

int64_t fx_plugin_transform(const fx_plugin *plugin, void *context, int64_t value, bool *called) {
    int64_t (*transform)(void *, int64_t) = __atomic_load_n(&plugin->transform, __ATOMIC_ACQUIRE);
    *called = transform != NULL;
    return transform ? transform(context, value) : value;
}

size_t fx_plugin_offset(int member) {
    switch (member) {
    case 0: return offsetof(fx_plugin, version);
    case 1: return offsetof(fx_plugin, start);
    case 2: return offsetof(fx_plugin, transform);
    case 3: return offsetof(fx_plugin, log);
    default: return offsetof(fx_plugin, weigh);
    }
}
size_t fx_plugin_size(void) { return sizeof(fx_plugin); }

fx_point fx_geometry_midpoint(const fx_geometry *geometry, fx_point a, fx_point b) {
    if (geometry->midpoint == NULL) return (fx_point){-1, -1};
    return geometry->midpoint(a, b);
}

/* ---- Threads ---- */
static int64_t fx_epoch = 0;
static _Thread_local int64_t fx_noted_epoch = -1;

int64_t fx_epoch_advance(void) { return __atomic_add_fetch(&fx_epoch, 1, __ATOMIC_SEQ_CST); }
void fx_epoch_note(void) { fx_noted_epoch = __atomic_load_n(&fx_epoch, __ATOMIC_SEQ_CST); }
int64_t fx_epoch_noted(void) { return fx_noted_epoch; }

typedef enum { FX_SHAPE_NARROW, FX_SHAPE_WIDE, FX_SHAPE_EIGHT, FX_SHAPE_QUAD } fx_hammer_shape;

struct fx_hammer {
    const fx_plugin *plugin;
    int64_t iterations, implementations;
    int count;
    /* Whether each call is made by a thread of its own, which ends after it. */
    bool fresh;
    /* How the slot is called: as transform, as fx_wide_transform or fx_eight_transform (every value argument
       i), or as fx_quad_transform (every field i). */
    fx_hammer_shape shape;
    pthread_t threads[16];
    int64_t wrong[16], nulls[16], calls[16], first_wrong[16];
    int finished, stopping;
};

typedef struct { fx_hammer *hammer; int index; } fx_worker;

/* What one call of transform(NULL, i) found, checked as fx_hammer_start says. */
typedef enum { FX_CALL_RIGHT, FX_CALL_NULL, FX_CALL_WRONG } fx_call_outcome;

static fx_call_outcome fx_hammer_call(const fx_hammer *h, int64_t i, int64_t *result) {
    fx_epoch_note();
    /* Load the slot afresh each call, as a library holding the table pointer does. */
    int64_t (*transform)(void *, int64_t) = __atomic_load_n(&h->plugin->transform, __ATOMIC_ACQUIRE);
    if (transform == NULL) return FX_CALL_NULL;
    switch (h->shape) {
    case FX_SHAPE_NARROW: *result = transform(NULL, i); break;
    case FX_SHAPE_WIDE: *result = ((fx_wide_transform)transform)(NULL, i, i, i, i, i, i, i, i); break;
    case FX_SHAPE_EIGHT: *result = ((fx_eight_transform)transform)(NULL, i, i, i, i, i, i, i); break;
    case FX_SHAPE_QUAD: {
        fx_quad q = ((fx_quad_transform)transform)(NULL, (fx_quad){i, i, i, i});
        *result = q.a == q.b && q.b == q.c && q.c == q.d ? q.a : -1;
        break;
    }
    }
    /* The default value: the implementation was removed, and the slot emptied, while the call was on
       its way. It is served like a NULL slot, never by the removed closure. */
    if (*result == 0 && i != 0) return FX_CALL_NULL;
    int64_t k = *result - i * 1000;
    return k < 0 || k >= h->implementations ? FX_CALL_WRONG : FX_CALL_RIGHT;
}

typedef struct { const fx_hammer *hammer; int64_t value, result; fx_call_outcome outcome; } fx_one_call;

static void *fx_hammer_call_once(void *argument) {
    fx_one_call *call = argument;
    call->outcome = fx_hammer_call(call->hammer, call->value, &call->result);
    return NULL;
}

static void *fx_hammer_work(void *argument) {
    fx_worker *worker = argument;
    fx_hammer *h = worker->hammer;
    int64_t wrong = 0, nulls = 0, calls = 0, first_wrong = 0;
    for (int64_t n = 0; n < h->iterations && !__atomic_load_n(&h->stopping, __ATOMIC_RELAXED); n++) {
        /* Fresh threads' values differ across workers, so each call's expected results are its own. */
        int64_t i = h->fresh ? n * h->count + worker->index + 1 : n;
        fx_one_call call = {h, i, 0, FX_CALL_NULL};
        if (h->fresh) {
            /* A thread's first call takes the entry's rare path (its call record is made then). */
            pthread_t thread;
            if (pthread_create(&thread, NULL, fx_hammer_call_once, &call) != 0) abort();
            pthread_join(thread, NULL);
        } else {
            fx_hammer_call_once(&call);
        }
        switch (call.outcome) {
        case FX_CALL_NULL: nulls++; break;
        case FX_CALL_RIGHT: calls++; break;
        case FX_CALL_WRONG:
            calls++;
            if (wrong++ == 0) first_wrong = call.result - i * 1000;
            break;
        }
    }
    h->wrong[worker->index] = wrong;
    h->nulls[worker->index] = nulls;
    h->calls[worker->index] = calls;
    h->first_wrong[worker->index] = first_wrong;
    __atomic_add_fetch(&h->finished, 1, __ATOMIC_RELEASE);
    free(worker);
    return NULL;
}

static fx_hammer *fx_hammer_start_threads(const fx_plugin *plugin, int threads, int64_t iterations,
                                          int64_t implementations, bool fresh, fx_hammer_shape shape) {
    if (threads < 1 || threads > 16) return NULL;
    fx_hammer *h = calloc(1, sizeof *h);
    h->plugin = plugin;
    h->iterations = iterations;
    h->implementations = implementations;
    h->count = threads;
    h->fresh = fresh;
    h->shape = shape;
    for (int i = 0; i < threads; i++) {
        fx_worker *worker = malloc(sizeof *worker);
        worker->hammer = h;
        worker->index = i;
        pthread_create(&h->threads[i], NULL, fx_hammer_work, worker);
    }
    return h;
}

fx_hammer *fx_hammer_start(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations) {
    return fx_hammer_start_threads(plugin, threads, iterations, implementations, false, FX_SHAPE_NARROW);
}

fx_hammer *fx_hammer_start_fresh(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations) {
    return fx_hammer_start_threads(plugin, threads, iterations, implementations, true, FX_SHAPE_NARROW);
}

fx_hammer *fx_hammer_start_wide(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations,
                                bool fresh) {
    return fx_hammer_start_threads(plugin, threads, iterations, implementations, fresh, FX_SHAPE_WIDE);
}

fx_hammer *fx_hammer_start_eight(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations,
                                 bool fresh) {
    return fx_hammer_start_threads(plugin, threads, iterations, implementations, fresh, FX_SHAPE_EIGHT);
}

fx_hammer *fx_hammer_start_quad(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations,
                                bool fresh) {
    return fx_hammer_start_threads(plugin, threads, iterations, implementations, fresh, FX_SHAPE_QUAD);
}

int64_t fx_hammer_first_wrong(const fx_hammer *h) {
    for (int i = 0; i < h->count; i++) {
        if (h->wrong[i] != 0) return h->first_wrong[i];
    }
    return 0;
}

void fx_hammer_stop(fx_hammer *h) { __atomic_store_n(&h->stopping, 1, __ATOMIC_RELAXED); }

bool fx_hammer_finished(const fx_hammer *h) { return __atomic_load_n(&h->finished, __ATOMIC_ACQUIRE) == h->count; }

int64_t fx_hammer_join(fx_hammer *h, int64_t *wrong, int64_t *null_slots) {
    int64_t calls = 0;
    *wrong = 0;
    *null_slots = 0;
    for (int i = 0; i < h->count; i++) {
        pthread_join(h->threads[i], NULL);
        calls += h->calls[i];
        *wrong += h->wrong[i];
        *null_slots += h->nulls[i];
    }
    free(h);
    return calls;
}

/* Calls in flight, by closure: each closure counts its calls in and out under its id, and what it
   captured, when it is released, counts a release while a call was in flight. */
#define FX_FLIGHTS 65536
static int64_t fx_flights[FX_FLIGHTS];
static int64_t fx_flight_violations;

void fx_flight_enter(int64_t id) { __atomic_add_fetch(&fx_flights[id % FX_FLIGHTS], 1, __ATOMIC_SEQ_CST); }
void fx_flight_leave(int64_t id) { __atomic_sub_fetch(&fx_flights[id % FX_FLIGHTS], 1, __ATOMIC_SEQ_CST); }
void fx_flight_released(int64_t id) {
    if (__atomic_load_n(&fx_flights[id % FX_FLIGHTS], __ATOMIC_SEQ_CST) != 0) {
        __atomic_add_fetch(&fx_flight_violations, 1, __ATOMIC_SEQ_CST);
    }
}
int64_t fx_flight_violation_count(void) { return __atomic_load_n(&fx_flight_violations, __ATOMIC_SEQ_CST); }

/* ---- Callback lifetimes ---- */
static struct { fx_completion done; void *user_data; } fx_pending[64];
static int fx_pending_count;
static pthread_mutex_t fx_pending_lock = PTHREAD_MUTEX_INITIALIZER;

void fx_start_operation(fx_completion done, void *user_data) {
    pthread_mutex_lock(&fx_pending_lock);
    if (fx_pending_count < 64) {
        fx_pending[fx_pending_count].done = done;
        fx_pending[fx_pending_count].user_data = user_data;
        fx_pending_count++;
    }
    pthread_mutex_unlock(&fx_pending_lock);
}

static void *fx_complete_all(void *argument) {
    int32_t status = *(int32_t *)argument;
    pthread_mutex_lock(&fx_pending_lock);
    int count = fx_pending_count;
    for (int i = 0; i < count; i++) fx_pending[i].done(fx_pending[i].user_data, status);
    fx_pending_count = 0;
    pthread_mutex_unlock(&fx_pending_lock);
    return (void *)(intptr_t)count;
}

int fx_cancel_operations(void) {
    pthread_mutex_lock(&fx_pending_lock);
    int count = fx_pending_count;
    fx_pending_count = 0;
    pthread_mutex_unlock(&fx_pending_lock);
    return count;
}

int fx_complete_operations(int32_t status) {
    pthread_t thread;
    void *count = NULL;
    pthread_create(&thread, NULL, fx_complete_all, &status);
    pthread_join(thread, &count);
    return (int)(intptr_t)count;
}

/* One handler per thread: tests of two suites register theirs while running in parallel, and a handler
   one test replaced and released must never be what another test's call reaches. */
static _Thread_local int64_t (*fx_handler)(int64_t);
static _Thread_local void *fx_handler_data;
static _Thread_local void (*fx_handler_destroy)(void *);

void fx_clear_handler(void) {
    if (fx_handler_destroy) fx_handler_destroy(fx_handler_data);
    fx_handler = NULL;
    fx_handler_data = NULL;
    fx_handler_destroy = NULL;
}

void fx_set_handler(int64_t (*handler)(int64_t), void *user_data, void (*destroy)(void *)) {
    fx_clear_handler();
    fx_handler = handler;
    fx_handler_data = user_data;
    fx_handler_destroy = destroy;
}

int64_t fx_call_handler(int64_t value) { return fx_handler ? fx_handler(value) : INT64_MIN; }

/* ---- stdio cookies ---- */
FILE *fx_fopencookie(void *cookie, const char *mode, const void *functions) {
    cookie_io_functions_t io;
    memcpy(&io, functions, sizeof io); /* fopencookie copies the table too */
    return fopencookie(cookie, mode, io);
}
size_t fx_cookie_io_functions_size(void) { return sizeof(cookie_io_functions_t); }
size_t fx_cookie_io_functions_offset(int member) {
    switch (member) {
    case 0: return offsetof(cookie_io_functions_t, read);
    case 1: return offsetof(cookie_io_functions_t, write);
    case 2: return offsetof(cookie_io_functions_t, seek);
    default: return offsetof(cookie_io_functions_t, close);
    }
}
int fx_fprintf_record(FILE *file, const char *name, int value, double ratio) {
    return fprintf(file, "%s=%d ratio=%.3f\n", name, value, ratio);
}

/* ---- nftw ---- */
int fx_nftw(const char *directory, const void *callback, int descriptors, int flags) {
    return nftw(directory, (int (*)(const char *, const struct stat *, int, struct FTW *))callback, descriptors, flags);
}
int fx_ftw_f(void) { return FTW_F; }
int fx_ftw_phys(void) { return FTW_PHYS; }

/* ---- The C compiler's layout of real library structs, by name, to check parsed descriptors against. ---- */
#include <sqlite3.h>
#include <libxml/parser.h>

static const struct { const char *structure, *member; size_t offset; } fx_members[] = {
    {"sqlite3_io_methods", "iVersion", offsetof(sqlite3_io_methods, iVersion)},
    {"sqlite3_io_methods", "xClose", offsetof(sqlite3_io_methods, xClose)},
    {"sqlite3_io_methods", "xRead", offsetof(sqlite3_io_methods, xRead)},
    {"sqlite3_io_methods", "xWrite", offsetof(sqlite3_io_methods, xWrite)},
    {"sqlite3_io_methods", "xTruncate", offsetof(sqlite3_io_methods, xTruncate)},
    {"sqlite3_io_methods", "xSync", offsetof(sqlite3_io_methods, xSync)},
    {"sqlite3_io_methods", "xFileSize", offsetof(sqlite3_io_methods, xFileSize)},
    {"sqlite3_io_methods", "xLock", offsetof(sqlite3_io_methods, xLock)},
    {"sqlite3_io_methods", "xUnlock", offsetof(sqlite3_io_methods, xUnlock)},
    {"sqlite3_io_methods", "xCheckReservedLock", offsetof(sqlite3_io_methods, xCheckReservedLock)},
    {"sqlite3_io_methods", "xFileControl", offsetof(sqlite3_io_methods, xFileControl)},
    {"sqlite3_io_methods", "xSectorSize", offsetof(sqlite3_io_methods, xSectorSize)},
    {"sqlite3_io_methods", "xDeviceCharacteristics", offsetof(sqlite3_io_methods, xDeviceCharacteristics)},
    {"sqlite3_io_methods", "xShmMap", offsetof(sqlite3_io_methods, xShmMap)},
    {"sqlite3_io_methods", "xShmLock", offsetof(sqlite3_io_methods, xShmLock)},
    {"sqlite3_io_methods", "xShmBarrier", offsetof(sqlite3_io_methods, xShmBarrier)},
    {"sqlite3_io_methods", "xShmUnmap", offsetof(sqlite3_io_methods, xShmUnmap)},
    {"sqlite3_io_methods", "xFetch", offsetof(sqlite3_io_methods, xFetch)},
    {"sqlite3_io_methods", "xUnfetch", offsetof(sqlite3_io_methods, xUnfetch)},
    {"sqlite3_vfs", "iVersion", offsetof(sqlite3_vfs, iVersion)},
    {"sqlite3_vfs", "szOsFile", offsetof(sqlite3_vfs, szOsFile)},
    {"sqlite3_vfs", "mxPathname", offsetof(sqlite3_vfs, mxPathname)},
    {"sqlite3_vfs", "pNext", offsetof(sqlite3_vfs, pNext)},
    {"sqlite3_vfs", "zName", offsetof(sqlite3_vfs, zName)},
    {"sqlite3_vfs", "pAppData", offsetof(sqlite3_vfs, pAppData)},
    {"sqlite3_vfs", "xOpen", offsetof(sqlite3_vfs, xOpen)},
    {"sqlite3_vfs", "xDelete", offsetof(sqlite3_vfs, xDelete)},
    {"sqlite3_vfs", "xAccess", offsetof(sqlite3_vfs, xAccess)},
    {"sqlite3_vfs", "xFullPathname", offsetof(sqlite3_vfs, xFullPathname)},
    {"sqlite3_vfs", "xDlOpen", offsetof(sqlite3_vfs, xDlOpen)},
    {"sqlite3_vfs", "xDlError", offsetof(sqlite3_vfs, xDlError)},
    {"sqlite3_vfs", "xDlSym", offsetof(sqlite3_vfs, xDlSym)},
    {"sqlite3_vfs", "xDlClose", offsetof(sqlite3_vfs, xDlClose)},
    {"sqlite3_vfs", "xRandomness", offsetof(sqlite3_vfs, xRandomness)},
    {"sqlite3_vfs", "xSleep", offsetof(sqlite3_vfs, xSleep)},
    {"sqlite3_vfs", "xCurrentTime", offsetof(sqlite3_vfs, xCurrentTime)},
    {"sqlite3_vfs", "xGetLastError", offsetof(sqlite3_vfs, xGetLastError)},
    {"sqlite3_vfs", "xCurrentTimeInt64", offsetof(sqlite3_vfs, xCurrentTimeInt64)},
    {"sqlite3_vfs", "xSetSystemCall", offsetof(sqlite3_vfs, xSetSystemCall)},
    {"sqlite3_vfs", "xGetSystemCall", offsetof(sqlite3_vfs, xGetSystemCall)},
    {"sqlite3_vfs", "xNextSystemCall", offsetof(sqlite3_vfs, xNextSystemCall)},
    {"sqlite3_module", "iVersion", offsetof(sqlite3_module, iVersion)},
    {"sqlite3_module", "xCreate", offsetof(sqlite3_module, xCreate)},
    {"sqlite3_module", "xConnect", offsetof(sqlite3_module, xConnect)},
    {"sqlite3_module", "xBestIndex", offsetof(sqlite3_module, xBestIndex)},
    {"sqlite3_module", "xDisconnect", offsetof(sqlite3_module, xDisconnect)},
    {"sqlite3_module", "xDestroy", offsetof(sqlite3_module, xDestroy)},
    {"sqlite3_module", "xOpen", offsetof(sqlite3_module, xOpen)},
    {"sqlite3_module", "xClose", offsetof(sqlite3_module, xClose)},
    {"sqlite3_module", "xFilter", offsetof(sqlite3_module, xFilter)},
    {"sqlite3_module", "xNext", offsetof(sqlite3_module, xNext)},
    {"sqlite3_module", "xEof", offsetof(sqlite3_module, xEof)},
    {"sqlite3_module", "xColumn", offsetof(sqlite3_module, xColumn)},
    {"sqlite3_module", "xRowid", offsetof(sqlite3_module, xRowid)},
    {"sqlite3_module", "xUpdate", offsetof(sqlite3_module, xUpdate)},
    {"sqlite3_module", "xBegin", offsetof(sqlite3_module, xBegin)},
    {"sqlite3_module", "xSync", offsetof(sqlite3_module, xSync)},
    {"sqlite3_module", "xCommit", offsetof(sqlite3_module, xCommit)},
    {"sqlite3_module", "xRollback", offsetof(sqlite3_module, xRollback)},
    {"sqlite3_module", "xFindFunction", offsetof(sqlite3_module, xFindFunction)},
    {"sqlite3_module", "xRename", offsetof(sqlite3_module, xRename)},
    {"sqlite3_module", "xSavepoint", offsetof(sqlite3_module, xSavepoint)},
    {"sqlite3_module", "xRelease", offsetof(sqlite3_module, xRelease)},
    {"sqlite3_module", "xRollbackTo", offsetof(sqlite3_module, xRollbackTo)},
    {"sqlite3_module", "xShadowName", offsetof(sqlite3_module, xShadowName)},
#if SQLITE_VERSION_NUMBER >= 3044000
    /* SQLite 3.44 added a member at the end (Debian 13 and later ship such a SQLite). */
    {"sqlite3_module", "xIntegrity", offsetof(sqlite3_module, xIntegrity)},
#endif
    {"cookie_io_functions_t", "read", offsetof(cookie_io_functions_t, read)},
    {"cookie_io_functions_t", "write", offsetof(cookie_io_functions_t, write)},
    {"cookie_io_functions_t", "seek", offsetof(cookie_io_functions_t, seek)},
    {"cookie_io_functions_t", "close", offsetof(cookie_io_functions_t, close)},
    {"xmlSAXHandler", "internalSubset", offsetof(xmlSAXHandler, internalSubset)},
    {"xmlSAXHandler", "isStandalone", offsetof(xmlSAXHandler, isStandalone)},
    {"xmlSAXHandler", "hasInternalSubset", offsetof(xmlSAXHandler, hasInternalSubset)},
    {"xmlSAXHandler", "hasExternalSubset", offsetof(xmlSAXHandler, hasExternalSubset)},
    {"xmlSAXHandler", "resolveEntity", offsetof(xmlSAXHandler, resolveEntity)},
    {"xmlSAXHandler", "getEntity", offsetof(xmlSAXHandler, getEntity)},
    {"xmlSAXHandler", "entityDecl", offsetof(xmlSAXHandler, entityDecl)},
    {"xmlSAXHandler", "notationDecl", offsetof(xmlSAXHandler, notationDecl)},
    {"xmlSAXHandler", "attributeDecl", offsetof(xmlSAXHandler, attributeDecl)},
    {"xmlSAXHandler", "elementDecl", offsetof(xmlSAXHandler, elementDecl)},
    {"xmlSAXHandler", "unparsedEntityDecl", offsetof(xmlSAXHandler, unparsedEntityDecl)},
    {"xmlSAXHandler", "setDocumentLocator", offsetof(xmlSAXHandler, setDocumentLocator)},
    {"xmlSAXHandler", "startDocument", offsetof(xmlSAXHandler, startDocument)},
    {"xmlSAXHandler", "endDocument", offsetof(xmlSAXHandler, endDocument)},
    {"xmlSAXHandler", "startElement", offsetof(xmlSAXHandler, startElement)},
    {"xmlSAXHandler", "endElement", offsetof(xmlSAXHandler, endElement)},
    {"xmlSAXHandler", "reference", offsetof(xmlSAXHandler, reference)},
    {"xmlSAXHandler", "characters", offsetof(xmlSAXHandler, characters)},
    {"xmlSAXHandler", "ignorableWhitespace", offsetof(xmlSAXHandler, ignorableWhitespace)},
    {"xmlSAXHandler", "processingInstruction", offsetof(xmlSAXHandler, processingInstruction)},
    {"xmlSAXHandler", "comment", offsetof(xmlSAXHandler, comment)},
    {"xmlSAXHandler", "warning", offsetof(xmlSAXHandler, warning)},
    {"xmlSAXHandler", "error", offsetof(xmlSAXHandler, error)},
    {"xmlSAXHandler", "fatalError", offsetof(xmlSAXHandler, fatalError)},
    {"xmlSAXHandler", "getParameterEntity", offsetof(xmlSAXHandler, getParameterEntity)},
    {"xmlSAXHandler", "cdataBlock", offsetof(xmlSAXHandler, cdataBlock)},
    {"xmlSAXHandler", "externalSubset", offsetof(xmlSAXHandler, externalSubset)},
    {"xmlSAXHandler", "initialized", offsetof(xmlSAXHandler, initialized)},
    {"xmlSAXHandler", "_private", offsetof(xmlSAXHandler, _private)},
    {"xmlSAXHandler", "startElementNs", offsetof(xmlSAXHandler, startElementNs)},
    {"xmlSAXHandler", "endElementNs", offsetof(xmlSAXHandler, endElementNs)},
    {"xmlSAXHandler", "serror", offsetof(xmlSAXHandler, serror)},
};
static const struct { const char *structure; size_t size; } fx_sizes[] = {
    {"xmlSAXHandler", sizeof(xmlSAXHandler)},
    {"sqlite3_io_methods", sizeof(sqlite3_io_methods)},
    {"sqlite3_vfs", sizeof(sqlite3_vfs)},
    {"sqlite3_module", sizeof(sqlite3_module)},
    {"cookie_io_functions_t", sizeof(cookie_io_functions_t)},
};

long fx_member_offset(const char *structure, const char *member) {
    for (size_t i = 0; i < sizeof fx_members / sizeof fx_members[0]; i++)
        if (strcmp(fx_members[i].structure, structure) == 0 && strcmp(fx_members[i].member, member) == 0)
            return (long)fx_members[i].offset;
    return -1;
}

int fx_member_count(const char *structure) {
    int count = 0;
    for (size_t i = 0; i < sizeof fx_members / sizeof fx_members[0]; i++) count += strcmp(fx_members[i].structure, structure) == 0;
    return count;
}

long fx_struct_size(const char *structure) {
    for (size_t i = 0; i < sizeof fx_sizes / sizeof fx_sizes[0]; i++)
        if (strcmp(fx_sizes[i].structure, structure) == 0) return (long)fx_sizes[i].size;
    return -1;
}

#if defined(__x86_64__)
#define FX_RAW(NAME, T) \
    __attribute__((naked)) uint64_t NAME(T value) { __asm__("movq %rdi, %rax\n\tret"); }
#else
#define FX_RAW(NAME, T) \
    uint64_t NAME(T value) { (void)value; return 0; }
#endif
FX_RAW(fx_raw_i8, int8_t)
FX_RAW(fx_raw_u8, uint8_t)
FX_RAW(fx_raw_i16, int16_t)
FX_RAW(fx_raw_bool, bool)

/* An imported C enum by value, in and out: fx_kind has no negative constant, so C gives it an unsigned
   type and Swift imports it with a UInt32 raw value. */
fx_kind fx_next_kind(fx_kind kind) { return kind == FX_LD ? FX_U8 : (fx_kind)(kind + 1); }

/* complex.c's, which the header does not declare: Swift reads no complex type. */
#include <complex.h>
double _Complex fx_complex_apply(double _Complex (*)(double _Complex, float _Complex), double _Complex, float _Complex);
float _Complex fx_complex_float_apply(float _Complex (*)(float _Complex, int), float _Complex, int);
long double _Complex fx_complex_long_apply(long double _Complex (*)(long double _Complex), long double _Complex);
double fx_complex_long_real(long double _Complex);
double fx_complex_long_imaginary(long double _Complex);
/* variadic.c's. */
void fx_log_kinds(void (*)(void *, const char *, ...), void *);
void fx_log_many(void (*)(void *, const char *, ...), void *);
void fx_log_into(void *, const char *, ...);
void fx_log_long_doubles(void (*)(void *, const char *, ...), void *);
long fx_sum_through(long (*)(int, ...));
double fx_mixed_through(double (*)(float, double, int, ...));
/* int128.c's. */
__int128 fx_int128_muladd(__int128, __int128, __int128);
unsigned __int128 fx_uint128_apply(unsigned __int128 (*)(unsigned __int128, int), unsigned __int128, int);

const void *fx_function(const char *name) {
    static const struct { const char *name; const void *address; } functions[] = {
#define FX_SCALAR_ENTRY(NAME, T) {"fx_ref_" #NAME, (const void *)fx_ref_##NAME}, \
    {"fx_after_struct_" #NAME, (const void *)fx_after_struct_##NAME},
        FX_SCALARS(FX_SCALAR_ENTRY)
#define FX_STRUCT_ENTRY(S) {"fx_ref_" #S, (const void *)fx_ref_##S},
        FX_STRUCTS(FX_STRUCT_ENTRY)
        {"fx_many16", (const void *)fx_many16},
        {"fx_six_long_floats", (const void *)fx_six_long_floats},
        {"fx_chars_float_pair", (const void *)fx_chars_float_pair},
        {"fx_sum_variadic", (const void *)fx_sum_variadic},
        {"fx_raw_i8", (const void *)fx_raw_i8},
        {"fx_raw_u8", (const void *)fx_raw_u8},
        {"fx_raw_i16", (const void *)fx_raw_i16},
        {"fx_raw_bool", (const void *)fx_raw_bool},
        {"fx_next_kind", (const void *)fx_next_kind},
        {"fx_jump_back", (const void *)fx_jump_back},
        {"fx_complex_apply", (const void *)fx_complex_apply},
        {"fx_complex_float_apply", (const void *)fx_complex_float_apply},
        {"fx_complex_long_apply", (const void *)fx_complex_long_apply},
        {"fx_complex_long_real", (const void *)fx_complex_long_real},
        {"fx_complex_long_imaginary", (const void *)fx_complex_long_imaginary},
        {"fx_log_kinds", (const void *)fx_log_kinds},
        {"fx_log_many", (const void *)fx_log_many},
        {"fx_log_into", (const void *)fx_log_into},
        {"fx_log_long_doubles", (const void *)fx_log_long_doubles},
        {"fx_sum_through", (const void *)fx_sum_through},
        {"fx_mixed_through", (const void *)fx_mixed_through},
        {"fx_int128_muladd", (const void *)fx_int128_muladd},
        {"fx_uint128_apply", (const void *)fx_uint128_apply},
    };
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        if (strcmp(functions[i].name, name) == 0) return functions[i].address;
    }
    return NULL;
}

/* ---- A process that may never make memory executable, and what its memory map says ---- */
#include <stdio.h>
#include <sys/prctl.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

int fx_forbid_executable_memory(void) {
    /* Spelled out: glibc's headers predate the kernel's names. */
    return prctl(65 /* PR_SET_MDWE */, 1 /* PR_MDWE_REFUSE_EXEC_GAIN */, 0L, 0L, 0L);
}

int fx_executable_memory_forbiddable(void) {
    return prctl(66 /* PR_GET_MDWE */, 0L, 0L, 0L, 0L) >= 0;
}

int fx_membarrier_available(void) {
    /* As DelegateKit asks: the command is known and this process may register for it (registering twice
       is harmless). */
    long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return commands >= 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0
        && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

int fx_code_kind(const void *address) {
#if defined(__x86_64__)
    /* endbr64; mov disp32(%rip), %r9 (4c 8b 0d) or %r10 (4c 8b 15); jmp *disp32(%rip) (ff 25) */
    uint32_t words[1];
    memcpy(words, address, sizeof words);
    const unsigned char *bytes = address;
    if (words[0] != 0xfa1e0ff3 || bytes[4] != 0x4c || bytes[5] != 0x8b || bytes[11] != 0xff || bytes[12] != 0x25) return 0;
    return bytes[6] == 0x0d ? 1 : bytes[6] == 0x15 ? 2 : 0;
#elif defined(__aarch64__)
    /* bti c; ldr x5 (the register path's slots) or x18 (libffi's), literal; ldr x16, literal; br x16. */
    uint32_t more[4];
    memcpy(more, address, sizeof more);
    if (more[0] != 0xd503245f || (more[1] & 0xff000000) != 0x58000000) return 0;
    if ((more[2] & 0xff00001f) != 0x58000010 || more[3] != 0xd61f0200) return 0;
    return (more[1] & 0x1f) == 5 ? 1 : (more[1] & 0x1f) == 18 ? 2 : 0;
#else
    return 0;
#endif
}

const void *fx_slot_entry(const void *address) {
    const unsigned char *bytes = address;
    const void *const *word = NULL;
#if defined(__x86_64__)
    /* jmp *disp32(%rip) at byte 11: the displacement counts from the instruction's end, byte 17. */
    int32_t displacement;
    memcpy(&displacement, bytes + 13, sizeof displacement);
    word = (const void *const *)(bytes + 17 + displacement);
#elif defined(__aarch64__)
    /* ldr x16, literal at byte 8: a signed 19-bit word offset from the instruction itself. */
    uint32_t load;
    memcpy(&load, bytes + 8, sizeof load);
    int32_t offset = (int32_t)(load << 8) >> 13;
    word = (const void *const *)(bytes + 8 + (intptr_t)offset * 4);
#endif
    return word == NULL ? NULL : *word;
}

int fx_mapping_of(const void *address, char *permissions, char *path, size_t path_size) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return -1;
    char line[4096];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, maps) != NULL) {
        unsigned long start, end;
        int path_start = 0;
        if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, permissions, &path_start) < 3) continue;
        if ((unsigned long)address < start || (unsigned long)address >= end) continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(path, path_size, "%s", path_start > 0 ? line + path_start : "");
        found = 0;
    }
    fclose(maps);
    return found;
}

int fx_writable_executable_mappings(char *lines, size_t size) {
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return -1;
    char line[4096];
    int count = 0;
    size_t used = 0;
    if (lines != NULL && size > 0) lines[0] = '\0';
    while (fgets(line, sizeof line, maps) != NULL) {
        char permissions[5] = "";
        if (sscanf(line, "%*s %4s", permissions) != 1 || permissions[1] != 'w' || permissions[2] != 'x') continue;
        count++;
        if (lines == NULL || used >= size) continue;
        int written = snprintf(lines + used, size - used, "%s", line);
        if (written > 0) used += (size_t)written;
    }
    fclose(maps);
    return count;
}
