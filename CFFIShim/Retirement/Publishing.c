/* See Publishing.h. */
#include <CDelegateKitRetirement/Publishing.h>

void cffi_store_pointer(void **slot, const void *value) {
    __atomic_store_n(slot, (void *)value, __ATOMIC_RELEASE);
}

const void *cffi_load_pointer(void *const *slot) {
    return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}
