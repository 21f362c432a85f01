/* Callers of seven to twelve parameters (DelegateKitArities.h), each through a pointer of the callback's
   own type, as C calls it. */
#include "DelegateKitArities.h"

#include <stdbool.h>

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
