#ifndef CDELEGATEKIT_SLOT_STUB_H
#define CDELEGATEKIT_SLOT_STUB_H

/* The C half of a slot's stub (Sources/DelegateKit/Delegates/SlotTable/SlotStub.swift), on libffi's path. */
#include <CDelegateKitLibffi/Libffi.h>
#include <CDelegateKitRetirement/Retirement.h>
#include <CDelegateKitTrampolines/Trampolines.h>

/* What a closure C calls directly runs through, so that its removal knows whether it runs: a call marks the
   guard as running, then runs `handler` with `user_data` unless the guard was retired, in which case it
   calls what `slot` holds now (or returns zero when that is NULL). The whole check is C, so it costs a
   few instructions and no call into Swift. A guard is retired whenever the slot does not hold its
   closure; once retired and no longer running, its handler and user data may be changed and the guard
   published again, for another closure of the same slot. */
typedef struct cffi_guard {
    /* First, so that a call's acquiring load of it is one instruction on aarch64 (ldar takes no offset). */
    int retired;
    cffi_closure_handler handler;
    void *user_data;
    void *const *slot;
    /* In a debug build, the bound closure's register body: its function value's two words, its code and
       its context, which cffi_guard_call_registers calls through. */
    const void *registers[2];
} cffi_guard;

/* Whether calls may run the guard's handler (an acquiring load: the handler was set before publishing). */
static inline int cffi_guard_is_published(const cffi_guard *guard) {
    return !__atomic_load_n(&guard->retired, __ATOMIC_ACQUIRE);
}

/* Calls the bound closure's register body through its words, in a published guard: a debug build's call,
   where Swift would copy the stored function value first (SlotStub.swift). */
static inline cffi_registers cffi_guard_call_registers(const cffi_guard *guard, uint64_t i0, uint64_t i1,
                                                       uint64_t i2, uint64_t i3, uint64_t i4, double d0, double d1,
                                                       double d2, double d3, double d4, double d5, double d6,
                                                       double d7) {
    return cffi_call_register_body(i0, i1, i2, i3, i4, guard->registers, d0, d1, d2, d3, d4, d5, d6, d7);
}

/* The libffi handler of a guarded closure; its user data is the cffi_guard. */
void cffi_guarded_entry(ffi_cif *cif, void *result, void **arguments, void *guard);
/* Retires the guard (sequentially consistent, against cffi_enter): later calls no longer run it. */
void cffi_guard_retire(cffi_guard *guard);
/* Un-retires the guard (sequentially consistent): calls run its handler again. Set the handler and user
   data first; publish before the slot points at the guard's closure. */
void cffi_guard_publish(cffi_guard *guard);

/* The register entries of a slot's stub and of a slot's dispatcher, in both forms (see Trampolines.h). They
   are Swift functions (SlotStub.swift, PlanCell.swift), which a register slot enters directly: Swift calls
   a function whose arguments are 64-bit integers, pointers and doubles, and whose result is one of them,
   as C calls it, while a C-callable closure would be a function of its own jumping to the Swift one
   (a frame and a jump more on every call; see ARCHITECTURE.md, "The register path"). */
extern const cffi_integer_entry cffi_slot_stub_integer_entry;
extern const cffi_floating_entry cffi_slot_stub_floating_entry;
extern const cffi_integer_entry cffi_dispatcher_integer_entry;
extern const cffi_floating_entry cffi_dispatcher_floating_entry;

#endif
