#ifndef CDELEGATEKIT_TRAMPOLINES_H
#define CDELEGATEKIT_TRAMPOLINES_H

/* The code C calls: slots of DelegateKit's trampoline table (TrampolineTable.S, Trampolines.c), and a
   direct call of C in registers. The Swift side that owns it is
   Sources/DelegateKit/Closures/RegisterPath/TrampolineShim.swift; libffi's closures take slots through
   CDelegateKitLibffi.

   A slot is code that never changes, mapped read+execute from this package's own binary beside a
   read+write page of data words: its context and its entry. Calling the slot puts the context in a
   register of its kind and jumps to the entry with every argument register and the stack as the caller
   left them. No page is ever writable and executable, and no page becomes executable after being written,
   so slots work in a process under PR_SET_MDWE, systemd's MemoryDenyWriteExecute= and SELinux without
   execmem, whatever libffi was built with. */
#include <stddef.h>
#include <stdint.h>

/* ---- The register path (x86_64 System V, AAPCS64) ----
   A signature whose arguments all travel in registers (at most 5 of integer class: integers, bool,
   pointers; at most 8 floating: float, double) and whose result is void, integer class, float or double
   can be entered without libffi: a slot loads a context pointer into the sixth integer argument register
   (r9; x5), which such a signature leaves free, and jumps to an entry taking (i0..i4, context, d0..d7).
   An entry comes in two forms, by the register its result goes back in: the integer one (rax; x0) for a
   result that is void or of integer class, an integer narrower than 64 bits in the low bits; the floating
   one (xmm0; d0) for float or double, a float in the low half. So one entry of each form serves every
   such signature, and the result is where the caller reads it with no instruction between. */
typedef uint64_t (*cffi_integer_entry)(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4, void *context,
                                       double d0, double d1, double d2, double d3, double d4, double d5, double d6,
                                       double d7);
typedef double (*cffi_floating_entry)(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4, void *context,
                                      double d0, double d1, double d2, double d3, double d4, double d5, double d6,
                                      double d7);

/* The register path's entry for a Swift function of register form (Sources/DelegateKit/Closures/
   RegisterPath/RegisterBody.swift), in both forms at once (TrampolineTable.S): `context` points at the
   function value's two words, its code and its context (inside the CClosure that holds it), and the entry
   calls the code with the argument registers in place and the context in Swift's self register (r13;
   x20). It leans on three properties of Swift's calling convention, stated in ARCHITECTURE.md ("The
   register path") and proven by the tests of both paths on the whole signature matrix on each
   architecture: integer and floating arguments travel as in C, the self register is preserved as C's
   callee-saved registers are, and a struct of a UInt64 and a Double comes back in both result registers
   at once (rax and xmm0; x0 and d0), so the result is where either form's caller reads it. */
uint64_t cffi_enter_register_body(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4, void *context,
                                  double d0, double d1, double d2, double d3, double d4, double d5, double d6,
                                  double d7);

/* Both result registers of a C function called in registers (cffi_call_registers): the integer one and the
   floating one, whichever the function's result type names. */
typedef struct cffi_registers {
    uint64_t integer;
    double sse;
} cffi_registers;

/* cffi_enter_register_body as Swift calls it, given the address of a function value's two words: a debug
   build calls a stored closure this way, since calling it as a Swift value copies it first (a retain and a
   release each call). Its result comes back as a cffi_registers: on x86_64 that is rax and xmm0, so this is
   cffi_enter_register_body itself; on aarch64 (x0 and x1) a copy that moves d0 to x1 too. */
cffi_registers cffi_call_register_body(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4,
                                       const void *body, double d0, double d1, double d2, double d3, double d4,
                                       double d5, double d6, double d7);

/* A Swift function value in its most general form, which is how a function value passed through a generic
   parameter is stored: every argument passed by address, the result through the indirect-result register
   (rax; x8), the value's context in Swift's self register (r13; x20). That form is the same for every
   Swift type, so cffi_call_opaque calls any closure of a register-only signature with no code made for
   its types: what unspecialized (debug) builds use instead of converting each argument in generic code
   (Sources/DelegateKit/Closures/RegisterPath/OpaqueBody.swift). The pack form (cffi_call_pack) is as
   general, so the same call serves a closure of more than six parameters in every build
   (Sources/DelegateKit/Closures/PackFunction.swift). */
typedef struct cffi_opaque_call {
    const void *function;
    const void *context;
    /* 64 minus the width of a signed integer result narrower than 64 bits, to sign-extend it; else 0 (the
       result's bytes are read from a zeroed word, so narrower results come back zero-extended). */
    uint64_t result_shift;
    /* For a function whose parameters are one pack (cffi_call_pack's form), the number of its arguments
       (at least 1): it is passed an array of their addresses; 0 for a function that takes each address as
       an argument of its own (six at most). */
    uint64_t pack;
    /* Per argument (the rest any valid offset): its register's offset in a block of the integer registers
       i0..i4 then the floating ones d0..d7, 8 bytes each. A value's bytes are the low bytes of its
       register, as C leaves them (a float the low half). Thirteen at most, and a spare: x86_64 makes the
       pack two entries at a time. */
    intptr_t arguments[14];
} cffi_opaque_call;

/* Calls `call`'s function with the arguments of a register-only call whose registers are these: stores
   them in a block on its own stack, passes the address of each argument's register (or, for a pack, an
   array of those addresses), and returns the
   result word in both result registers (on aarch64 also in x1: cffi_registers comes back in x0 and x1).
   Takes `call` where a register entry takes its context, so it is one too (TrampolineTable.S). */
cffi_registers cffi_call_opaque(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4,
                                const cffi_opaque_call *call, double d0, double d1, double d2, double d3, double d4,
                                double d5, double d6, double d7);

/* A Swift function value whose parameters are one pack, `(repeat each A) -> R` as a generic type stores it:
   its one argument is the pack, an array of the address of each element, which is how libffi hands a
   closure its arguments; its result goes through the indirect-result register (rax; x8), its context in
   Swift's self register (r13; x20). So cffi_call_pack calls a closure of any arity with libffi's argument
   array as it is, at no cost per argument: `function` points at the value's two words, its code and its
   context (Sources/DelegateKit/Closures/PackFunction.swift). The result is written in the Swift type's own
   size; the caller widens it. */
void cffi_call_pack(const void *function, void *const *arguments, void *result);

/* A Swift function value in its most general form (above) of `count` parameters, 7 or 8: cffi_call_spread
   passes each address of libffi's argument array as an argument of its own, in registers and (past six,
   on x86_64) on the stack, and the result's address in the indirect-result register. What a fixed-arity
   closure of seven or eight parameters runs where its arguments are not all in registers (those go
   through the entry of their register form instead), as a pack-form closure would, with no pack to build. */
void cffi_call_spread(const void *function, void *const *arguments, uint64_t count, void *result);

/* A call of a C function of any signature whose arguments are where the ABI puts them, in a block of
   CFFI_CALL_WORDS words and `stack_count` stack words: the integer argument registers (rdi..r9; x0..x7),
   then 8 vector registers (a float in its low 4 bytes), then on x86_64 the number of vector registers that
   hold arguments (`al`, for a variadic callee) and whether the result comes back on the x87 stack, on
   aarch64 the address of a result returned in memory (x8). After the call the block holds the result
   registers at the same places: rax and rdx (x0 and x1) in the first two words, xmm0 and xmm1 (d0 to d3)
   in the first vector words, and a `long double` result at CFFI_CALL_X87. cffi_call (CDelegateKitLibffi)
   lays out the block by a plan made once per signature. */
#if defined(__aarch64__)
#define CFFI_CALL_INTEGERS 8
#define CFFI_CALL_INDIRECT 16
#define CFFI_CALL_WORDS 17
#else
#define CFFI_CALL_INTEGERS 6
#define CFFI_CALL_VECTOR_COUNT 14
#define CFFI_CALL_X87 14
#define CFFI_CALL_X87_RESULT 15
#define CFFI_CALL_WORDS 16
#endif
void cffi_call_block(const void *function, uint64_t *block, const uint64_t *stack, uint64_t stack_count);

/* ---- The array entry (x86_64 System V, AAPCS64) ----
   libffi's closure entry works out where each argument arrived on every call, argument by argument (about
   a hundred instructions each). For a signature whose arguments are all scalars of at most 8 bytes
   (integers, bool, pointers, float, double), however many, and whose result is void or one of them, that
   is known when the closure is made: each argument is in the next register of its class or, once those
   run out, in the caller's next 8-byte stack word. cffi_enter_array is then the closure's entry in
   libffi's place, reached from a STATIC_CHAIN slot with a cffi_array_entry as its context: it stores the
   argument registers in its frame, makes libffi's argument array from `places`, and calls the closure's
   handler as libffi's entry would (handler(cif, result, arguments, user_data)); the result word, which the
   handler wrote as libffi wants it (a narrow integer as a whole ffi_arg), comes back in both result
   registers. So every handler of libffi's form runs unchanged, and an argument costs one entry of the
   array. CDelegateKitLibffi's closures take it where their cif allows (cffi_closure_create).

   On x86_64 structs take it too, where each lies in one place: one the ABI passes in memory (larger than
   16 bytes, or holding a `long double`) is in the caller's stack words; one of integer eightbytes only in
   consecutive integer registers, one of SSE eightbytes only in consecutive vector registers, each stored
   as 8 bytes in the block, so its bytes are contiguous there too (a struct mixing the classes is not: it
   keeps libffi's entry); so does a `long double`, in memory. A struct or `long double` result is returned
   by cffi_enter_array_composite, as `result` says. */
typedef struct cffi_array_entry {
    void (*handler)(void *cif, void *result, void **arguments, void *user_data);
    void *user_data;
    void *cif;
    /* The bytes the entry reserves below its saved frame pointer and return address (16 bytes): a multiple
       of 16, at least CFFI_ARRAY_BLOCK + 8 * count. */
    uint32_t frame;
    uint32_t count;
    /* Per argument, its value's address from the entry's stack pointer in 8-byte units: a register in the
       block at the frame's bottom (CFFI_ARRAY_INTEGERS integer registers, then 8 vector registers, then
       the result words), or the caller's k-th stack word at frame / 8 + 2 + k. */
    const uint8_t *places;
    /* For cffi_enter_array_composite: where the result goes back (CFFI_ARRAY_RESULT_*). */
    uint32_t result;
} cffi_array_entry;

/* The integer argument registers cffi_enter_array stores (rdi..r9; x0..x7), its result words, and the
   bytes of its block: those registers, 8 vector registers, the result words and (x86_64) the result's
   kind, after which the argument array begins. */
#if defined(__aarch64__)
#define CFFI_ARRAY_INTEGERS 8
#define CFFI_ARRAY_BLOCK (8 * (CFFI_ARRAY_INTEGERS + 8 + 1))
#else
#define CFFI_ARRAY_INTEGERS 6
#define CFFI_ARRAY_BLOCK (8 * (CFFI_ARRAY_INTEGERS + 8 + 2 + 1))
#endif
/* The most arguments a cffi_array_entry takes: its places are bytes. */
#define CFFI_ARRAY_MAX_ARGUMENTS 100

/* How cffi_enter_array_composite returns a struct of two eightbytes (x86_64): both words in rax and rdx
   and in xmm0 and xmm1 (two of one class), the first in rax and the second in xmm0, the first in xmm0 and
   the second in rax; or one the caller passed the address of in rdi (in memory), which it returns; or a
   `long double`, on the x87 stack. */
enum {
    CFFI_ARRAY_RESULT_PAIR = 0,
    CFFI_ARRAY_RESULT_INTEGER_SSE = 1,
    CFFI_ARRAY_RESULT_SSE_INTEGER = 2,
    CFFI_ARRAY_RESULT_MEMORY = 3,
    CFFI_ARRAY_RESULT_X87 = 4,
};

/* The entries themselves, for a STATIC_CHAIN slot's entry word: not functions C calls by this type.
   cffi_enter_array returns a scalar result; cffi_enter_array_composite (x86_64) a struct. */
void cffi_enter_array(void);
#if defined(__x86_64__)
void cffi_enter_array_composite(void);
#endif

/* While set on a thread, closures made on it get register bodies that convert each argument by its Swift
   type even in a debug build: how the tests compare them with cffi_call_opaque's in one process. */
void cffi_opaque_calls_suppress(int suppress);
int cffi_opaque_calls_suppressed(void);

/* Whether the register path runs here: an x86_64 or aarch64 Linux build, DELEGATEKIT_FAST_PATH not "0",
   and the trampoline table mapped (see cffi_trampolines_available). Decided once. */
int cffi_register_path_available(void);

/* While set on a thread, closures made on it enter through libffi even where the register path runs:
   how the tests compare both paths in one process. */
void cffi_register_path_suppress(int suppress);
int cffi_register_path_suppressed(void);

/* ---- Slots ---- */
/* What a slot does with its context: put it where the register path's entries take it (the sixth integer
   argument register), or in the static-chain register, where a libffi Go closure's entry takes its
   closure (what CDelegateKitLibffi's closures are). */
enum { CFFI_TRAMPOLINE_REGISTERS = 0, CFFI_TRAMPOLINE_STATIC_CHAIN = 1 };

/* Whether slots can be made in this process: the table's page of this binary could be mapped again (it is
   found through /proc/self/maps and checked byte for byte). Decided once. */
int cffi_trampolines_available(void);

/* A free slot of `kind` entering `entry` with `context`, mapping more of the table when every slot is
   taken. Returns its handle (for the functions below) and stores the address C calls in *code, or returns
   NULL when no slot can be had. Thread-safe. */
void *cffi_trampoline_create(int kind, const void *entry, void *context, void **code);

/* The slot's context, and a new one, before C can call the code (or while no call runs). */
void *cffi_trampoline_context(const void *handle);
void cffi_trampoline_set_context(void *handle, void *context);

/* The address C calls, as cffi_trampoline_create stored it in *code. */
void *cffi_trampoline_code(void *handle);

/* Points the slot at an entry that writes `message` to stderr and stops the process: a call through a
   pointer C kept after its closure died stops loudly. `message` must outlive the slot. */
void cffi_trampoline_bury(void *handle, const char *message);

/* Hands the slot back; a later call through its address stops the process with a message until the slot
   is handed out again. Thread-safe. The calling thread keeps a few of the slots it frees (and of those it
   takes ahead as it makes slots), to hand out again without the lock, until it exits or calls
   cffi_trampoline_return_kept. */
void cffi_trampoline_free(void *handle);

/* Hands the slots this thread kept back to their mappings, as its exit does: for a test that counts what
   a mapping holds. */
void cffi_trampoline_return_kept(void);

/* How many slots live code holds: handed out, neither freed nor buried. What a leak of slots grows. */
size_t cffi_trampolines_live(void);

/* How many mappings of the table this process made, and how many of them are retired: every slot free
   (none kept by a thread), their memory given back, kept to be used again before any new one is made. */
void cffi_trampoline_mappings(size_t *count, size_t *retired);

/* How many slots of `kind` one mapping holds. */
int cffi_trampoline_slots_per_mapping(int kind);

/* Calls `function`, a C function of a register-only signature, with the registers of a call of that
   signature: a direct call, the same registers in, the same registers out. */
#if defined(__aarch64__)
/* In TrampolineTable.S: AAPCS64 returns a double in d0, which a call of this type would not read. */
cffi_registers cffi_call_registers(const void *function, uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3,
                                   uint64_t i4, double d0, double d1, double d2, double d3, double d4, double d5,
                                   double d6, double d7);
#else
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

/* cffi_call_registers for a variadic C function, whose arguments past its named ones are in the registers
   of a call of their promoted types (C's default argument promotions: a float as a double, a narrower
   integer as an int); `vectors` of d0-d7 are arguments. AAPCS64 on Linux passes those as named ones, so
   cffi_call_registers serves. x86_64 passes them as named ones too, but a variadic callee also reads al,
   the count of vector registers used, and saves that many for va_arg: a call through a variadic type with
   exactly those doubles as variadic arguments sets it (0 for integers only, saving the callee the eight
   stores), the doubles landing in xmm0 up in order. */
#if defined(__aarch64__)
static inline cffi_registers cffi_call_registers_variadic(const void *function, uint64_t i0, uint64_t i1, uint64_t i2,
                                                          uint64_t i3, uint64_t i4, unsigned vectors, double d0,
                                                          double d1, double d2, double d3, double d4, double d5,
                                                          double d6, double d7) {
    (void)vectors;
    return cffi_call_registers(function, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7);
}
#else
static inline cffi_registers cffi_call_registers_variadic(const void *function, uint64_t i0, uint64_t i1, uint64_t i2,
                                                          uint64_t i3, uint64_t i4, unsigned vectors, double d0,
                                                          double d1, double d2, double d3, double d4, double d5,
                                                          double d6, double d7) {
    cffi_registers (*f)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, ...) =
        (cffi_registers (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, ...))function;
    switch (vectors) {
    case 0: return f(i0, i1, i2, i3, i4);
    case 1: return f(i0, i1, i2, i3, i4, d0);
    case 2: return f(i0, i1, i2, i3, i4, d0, d1);
    case 3: return f(i0, i1, i2, i3, i4, d0, d1, d2);
    case 4: return f(i0, i1, i2, i3, i4, d0, d1, d2, d3);
    case 5: return f(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4);
    case 6: return f(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5);
    case 7: return f(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6);
    default: return f(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7);
    }
}
#endif

#endif
