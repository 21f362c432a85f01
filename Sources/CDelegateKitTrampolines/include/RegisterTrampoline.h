#ifndef CDELEGATEKIT_REGISTER_TRAMPOLINE_H
#define CDELEGATEKIT_REGISTER_TRAMPOLINE_H

/* The register path's C half: its trampoline, the probe that proves it runs, and a direct call in
   registers. The Swift side that owns it is Sources/DelegateKit/Shim/Trampolines.swift. */
#include <stdint.h>

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

#endif
