/* See SlotStub.h. */
#include <CDelegateKitRetirement/SlotStub.h>

#include <string.h>

void cffi_guarded_entry(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    cffi_guard *guard = user_data;
    cffi_enter(guard);
    if (__builtin_expect(cffi_guard_is_published(guard), 1)) {
        guard->handler(cif, result, arguments, guard->user_data);
    } else {
        /* Removed since C loaded the slot: behave as if C had loaded it a moment later. */
        const void *function = __atomic_load_n(guard->slot, __ATOMIC_ACQUIRE);
        if (function != NULL) {
            ffi_call(cif, FFI_FN(function), result, arguments);
        } else {
            size_t size = cif->rtype->size < sizeof(ffi_arg) ? sizeof(ffi_arg) : cif->rtype->size;
            memset(result, 0, size);
        }
    }
    cffi_leave();
}

void cffi_guard_retire(cffi_guard *guard) { __atomic_store_n(&guard->retired, 1, __ATOMIC_SEQ_CST); }

void cffi_guard_publish(cffi_guard *guard) { __atomic_store_n(&guard->retired, 0, __ATOMIC_SEQ_CST); }
