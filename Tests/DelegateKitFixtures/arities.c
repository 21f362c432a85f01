/* Callers of seven to twelve parameters (DelegateKitArities.h), each through a pointer of the callback's
   own type, as C calls it. */
#include "DelegateKitArities.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

int64_t fx_call_narrow9(const void *f) {
    int8_t (*call)(int8_t, int16_t, int32_t, int64_t, float, double, uint8_t, uint16_t, void *) =
        (int8_t (*)(int8_t, int16_t, int32_t, int64_t, float, double, uint8_t, uint16_t, void *))f;
    return call(FX_ARITY_I8, FX_ARITY_I16, FX_ARITY_I32, FX_ARITY_I64, FX_ARITY_F, FX_ARITY_D, FX_ARITY_U8, FX_ARITY_U16,
                FX_ARITY_P);
}

uint64_t fx_call_bool7(const void *f) {
    bool (*call)(int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t) =
        (bool (*)(int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t))f;
    return call(1, 2, 3, 4, 5, 6, 7);
}

void fx_call_void8(const void *f, int64_t *out) {
    ((void (*)(int64_t *, double, double, double, double, double, double, double))f)(out, 0.5, 1.5, 2.5, 3.5, 4.5,
                                                                                      5.5, 6.5);
}

int64_t fx_call_floating8(const void *f) {
    int16_t (*call)(double, double, double, double, double, double, double, float) =
        (int16_t (*)(double, double, double, double, double, double, double, float))f;
    return call(1, 2, 3, 4, 5, 6, 7, 8.5f);
}

int64_t fx_call_i64x12(const void *f) {
    return ((int64_t (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t))f)(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
}

/* ---- A thread of its own calling `int64_t f(int64_t × 12)` ---- */

struct fx_arity_caller {
    pthread_t thread;
    const void *function;
    int64_t result;
    int returned;
};

static void *fx_arity_caller_main(void *context) {
    fx_arity_caller *caller = context;
    int64_t result = fx_call_i64x12(caller->function);
    caller->result = result;
    __atomic_store_n(&caller->returned, 1, __ATOMIC_RELEASE);
    return NULL;
}

fx_arity_caller *fx_arity_caller_start(const void *f) {
    fx_arity_caller *caller = calloc(1, sizeof *caller);
    caller->function = f;
    if (pthread_create(&caller->thread, NULL, fx_arity_caller_main, caller) != 0) {
        free(caller);
        return NULL;
    }
    return caller;
}

void fx_arity_caller_cancel(fx_arity_caller *caller) { pthread_cancel(caller->thread); }

int fx_arity_caller_join(fx_arity_caller *caller, int64_t *result) {
    pthread_join(caller->thread, NULL);
    int returned = __atomic_load_n(&caller->returned, __ATOMIC_ACQUIRE);
    if (returned && result) *result = caller->result;
    free(caller);
    return returned;
}
