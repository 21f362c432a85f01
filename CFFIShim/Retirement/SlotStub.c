/* See SlotStub.h. */
#include <CDelegateKitRetirement/SlotStub.h>

#include <string.h>

/* Defined in Swift under these names (see SlotStub.h), of the entry types' own function types; hidden, so
   that each copy of the library in a process enters its own. */
#define SWIFT_ENTRY(form) __attribute__((visibility("hidden"))) extern __typeof__(*(cffi_##form##_entry)0)
SWIFT_ENTRY(integer) delegatekit_slot_stub_integer_entry;
SWIFT_ENTRY(floating) delegatekit_slot_stub_floating_entry;
SWIFT_ENTRY(integer) delegatekit_dispatcher_integer_entry;
SWIFT_ENTRY(floating) delegatekit_dispatcher_floating_entry;

const cffi_integer_entry cffi_slot_stub_integer_entry = delegatekit_slot_stub_integer_entry;
const cffi_floating_entry cffi_slot_stub_floating_entry = delegatekit_slot_stub_floating_entry;
const cffi_integer_entry cffi_dispatcher_integer_entry = delegatekit_dispatcher_integer_entry;
const cffi_floating_entry cffi_dispatcher_floating_entry = delegatekit_dispatcher_floating_entry;

void cffi_guarded_entry(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    cffi_guard *guard = user_data;
    cffi_enter(guard);
    if (__builtin_expect(cffi_guard_is_published(guard), 1)) {
        guard->handler(cif, result, arguments, guard->user_data);
    } else {
        /* Removed since C loaded the slot: behave as if C had loaded it a moment later. */
        const void *function = __atomic_load_n(guard->slot, __ATOMIC_ACQUIRE);
        if (function != NULL) {
            cffi_call(cif, function, result, arguments);
        } else {
            size_t size = cif->rtype->size < sizeof(ffi_arg) ? sizeof(ffi_arg) : cif->rtype->size;
            memset(result, 0, size);
        }
    }
    cffi_leave();
}

void cffi_guard_retire(cffi_guard *guard) { __atomic_store_n(&guard->retired, 1, __ATOMIC_SEQ_CST); }

void cffi_guard_publish(cffi_guard *guard) { __atomic_store_n(&guard->retired, 0, __ATOMIC_SEQ_CST); }
