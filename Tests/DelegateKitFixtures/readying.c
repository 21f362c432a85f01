/* A table's "readying", as CPython's PyType_Ready does it: data members set, NULL methods inherited from a
   base type, members already set left alone (DelegateKitReadying.h). */
#include "DelegateKitReadying.h"

#include <stddef.h>

static int base_finalized;

static int64_t base_hash(void *object) {
    (void)object;
    return FX_TYPE_BASE_HASH;
}

static int32_t base_setup(void *object, int64_t argument) {
    (void)object;
    (void)argument;
    return FX_TYPE_BASE_SETUP;
}

static double base_weight(void *object) {
    (void)object;
    return FX_TYPE_BASE_WEIGHT;
}

static void base_finalize(void *object) {
    (void)object;
    __atomic_add_fetch(&base_finalized, 1, __ATOMIC_RELAXED);
}

int fx_type_ready(fx_type *type) {
    type->flags |= FX_TYPE_READY;
    if (type->basicsize == 0) type->basicsize = FX_TYPE_BASE_SIZE;
    int filled = 0;
    if (type->hash == NULL) { type->hash = base_hash; filled++; }
    if (type->setup == NULL) { type->setup = base_setup; filled++; }
    if (type->weight == NULL) { type->weight = base_weight; filled++; }
    if (type->finalize == NULL) { type->finalize = base_finalize; filled++; }
    return filled;
}

const void *fx_type_base_method(int member) {
    switch (member) {
    case 0: return (const void *)base_hash;
    case 1: return (const void *)base_setup;
    case 2: return (const void *)base_weight;
    case 3: return (const void *)base_finalize;
    default: return NULL;
    }
}

void fx_type_inherit(fx_type *type, int member) {
    switch (member) {
    case 0: type->hash = base_hash; break;
    case 1: type->setup = base_setup; break;
    case 2: type->weight = base_weight; break;
    case 3: type->finalize = base_finalize; break;
    default: break;
    }
}

int fx_type_base_finalized(void) { return __atomic_load_n(&base_finalized, __ATOMIC_RELAXED); }

int64_t fx_type_call_hash(const fx_type *type, void *object) {
    int64_t (*hash)(void *) = __atomic_load_n(&type->hash, __ATOMIC_ACQUIRE);
    return hash ? hash(object) : INT64_MIN;
}

int32_t fx_type_call_setup(const fx_type *type, void *object, int64_t argument) {
    int32_t (*setup)(void *, int64_t) = __atomic_load_n(&type->setup, __ATOMIC_ACQUIRE);
    return setup ? setup(object, argument) : INT32_MIN;
}

double fx_type_call_weight(const fx_type *type, void *object) {
    double (*weight)(void *) = __atomic_load_n(&type->weight, __ATOMIC_ACQUIRE);
    return weight ? weight(object) : -1;
}

int fx_type_call_finalize(const fx_type *type, void *object) {
    void (*finalize)(void *) = __atomic_load_n(&type->finalize, __ATOMIC_ACQUIRE);
    if (finalize == NULL) return 0;
    finalize(object);
    return 1;
}
