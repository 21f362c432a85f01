#ifndef CFFISHIM_H
#define CFFISHIM_H

/* Linux distributions install libffi's header as <ffi.h>; Apple's SDKs as <ffi/ffi.h>. */
#if __has_include(<ffi.h>)
#include <ffi.h>
#elif __has_include(<ffi/ffi.h>)
#include <ffi/ffi.h>
#else
#error "libffi's header was not found: install libffi-dev (Debian, Ubuntu) or libffi-devel (Fedora)"
#endif
#include <setjmp.h>
#include <stdint.h>

/* libffi's type descriptors are mutable C globals, which Swift 6 refuses to take the address of;
   these return the addresses instead. */
ffi_type *cffi_type_void(void);
ffi_type *cffi_type_uint8(void);
ffi_type *cffi_type_sint8(void);
ffi_type *cffi_type_uint16(void);
ffi_type *cffi_type_sint16(void);
ffi_type *cffi_type_uint32(void);
ffi_type *cffi_type_sint32(void);
ffi_type *cffi_type_uint64(void);
ffi_type *cffi_type_sint64(void);
ffi_type *cffi_type_float(void);
ffi_type *cffi_type_double(void);
ffi_type *cffi_type_longdouble(void);
ffi_type *cffi_type_pointer(void);

/* The code libffi reaches for every call of a closure. */
typedef void (*cffi_closure_handler)(ffi_cif *cif, void *result, void **arguments, void *user_data);

/* ffi_prep_cif with the platform's default ABI; returns an ffi_status (FFI_OK is 0). */
int cffi_prep_cif(ffi_cif *cif, unsigned argument_count, ffi_type *result, ffi_type **arguments);
/* ffi_prep_cif_var: a call of a variadic function with `fixed_count` named arguments and these types after
   them (already promoted: libffi refuses float and integers narrower than int there). */
int cffi_prep_cif_var(ffi_cif *cif, unsigned fixed_count, unsigned argument_count, ffi_type *result,
                      ffi_type **arguments);

/* Allocates and prepares a closure. Returns the closure (to free later) and stores its callable code in
   *code, or returns NULL (nothing allocated) when the system refuses executable memory or prep fails. */
void *cffi_closure_create(ffi_cif *cif, cffi_closure_handler handler, void *user_data, void **code);
void cffi_closure_free(void *closure);
/* Points a closure whose owner is gone at a handler that writes `message` to stderr and aborts, so a
   late call through a stale pointer stops loudly instead of running freed memory. The closure stays
   allocated; `message` must outlive it. Returns 0 on success. */
int cffi_closure_bury(void *closure, ffi_cif *cif, void *code, const char *message);
/* Sets the user data a prepared closure passes to its handler (before C can call it). */
void cffi_closure_set_user_data(void *closure, void *user_data);

/* Calls `function` as described by `cif`. Integer results narrower than a register are written as a
   full ffi_arg, as libffi requires. */
void cffi_call(ffi_cif *cif, const void *function, void *result, void **arguments);

/* Calls `function` as cffi_call does, at a setjmp site: C code, or a closure, may longjmp to `target`
   while the call runs. Returns 0 when the function returned, else the value given to longjmp (1 for 0).
   On a jump back, the calling thread's DelegateKit calls that started inside are forgotten (the frames
   the jump skipped run no cleanup). `target` must not be jumped to after this returns. */
int cffi_call_catching_jump(struct __jmp_buf_tag *target, ffi_cif *cif, const void *function, void *result,
                            void **arguments);

/* A function-pointer slot in a table C reads while Swift replaces it: the store must never tear. */
void cffi_store_pointer(void **slot, const void *value);
const void *cffi_load_pointer(void *const *slot);

/* The record of calls in progress that lets a removal release what it removed without waiting. */
#include "Retirement.h"

/* What a closure C calls directly runs through, so that its removal knows whether it runs: a call marks the
   guard as running, then runs `handler` with `user_data` unless the guard was retired, in which case it
   calls what `slot` holds now (or returns zero when that is NULL). The whole check is C, so it costs a
   few instructions and no call into Swift. A guard is retired whenever the slot does not hold its
   closure; once retired and no longer running, its handler and user data may be changed and the guard
   published again, for another closure of the same slot. */
typedef struct cffi_guard {
    cffi_closure_handler handler;
    void *user_data;
    void *const *slot;
    int retired;
} cffi_guard;

/* Whether calls may run the guard's handler (an acquiring load: the handler was set before publishing). */
static inline int cffi_guard_is_published(const cffi_guard *guard) {
    return !__atomic_load_n(&guard->retired, __ATOMIC_ACQUIRE);
}

/* The libffi handler of a guarded closure; its user data is the cffi_guard. */
void cffi_guarded_entry(ffi_cif *cif, void *result, void **arguments, void *guard);
/* Retires the guard (sequentially consistent, against cffi_enter): later calls no longer run it. */
void cffi_guard_retire(cffi_guard *guard);
/* Un-retires the guard (sequentially consistent): calls run its handler again. Set the handler and user
   data first; publish before the slot points at the guard's closure. */
void cffi_guard_publish(cffi_guard *guard);

/* ---- The register path (x86_64 System V only) ----
   A signature whose arguments all travel in registers (at most 5 of integer class: integers, bool,
   pointers; at most 8 of SSE class: float, double) and whose result is void, integer class, float or
   double can be entered without libffi: a trampoline loads a context pointer into the sixth integer
   register, which such a signature leaves free, and jumps to an entry taking (i0..i4, context, d0..d7).
   The entry returns both result registers, so one entry serves every such signature; a float travels
   in the low half of `sse`, an integer narrower than 64 bits in the low bits of `integer`. */
typedef struct cffi_registers {
    uint64_t integer;
    double sse;
} cffi_registers;

typedef cffi_registers (*cffi_register_entry)(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4,
                                              void *context, double d0, double d1, double d2, double d3, double d4,
                                              double d5, double d6, double d7);

/* Whether the register path runs here: an x86_64 System V build, DELEGATEKIT_FAST_PATH not "0", and a
   trampoline written into libffi's closure memory proven to execute (a libffi with static trampolines
   executes code of its own at the closure's address, so there it does not). Probed once. */
int cffi_register_path_available(void);

/* While set on a thread, closures made on it enter through libffi even where the register path runs:
   how the tests compare both paths in one process. */
void cffi_register_path_suppress(int suppress);
int cffi_register_path_suppressed(void);

/* Allocates libffi closure memory and writes the trampoline that enters `entry` with `context` (an
   indirect jump; cffi_trampoline_create in TrampolinePages.h makes a near one where it can); only when
   cffi_register_path_available() and not suppressed on this thread. Returns the closure to free with
   cffi_closure_free (or bury) and stores the code address in *code, or returns NULL when the system
   refuses executable memory. */
void *cffi_register_closure_create(cffi_register_entry entry, void *context, void **code);

/* Calls `function`, a C function of a register-only signature, with the registers of a call of that
   signature: a direct call, the same registers in, the same registers out. */
static inline cffi_registers cffi_call_registers(const void *function, uint64_t i0, uint64_t i1, uint64_t i2,
                                                 uint64_t i3, uint64_t i4, double d0, double d1, double d2,
                                                 double d3, double d4, double d5, double d6, double d7) {
    /* Only the registers matter on x86_64 System V: the callee reads those its own signature names and
       sets the result register its result type names. */
    return ((cffi_registers (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, double, double, double,
                                double, double, double, double, double))function)(i0, i1, i2, i3, i4, d0, d1, d2,
                                                                                  d3, d4, d5, d6, d7);
}

#include "TrampolinePages.h"

#endif
