#ifndef CDELEGATEKIT_LIBFFI_H
#define CDELEGATEKIT_LIBFFI_H

/* The library's one way into libffi: type descriptors, call interfaces, calls and closures. The Swift
   side that owns it is Sources/DelegateKit/Shim/LibffiShim.swift, the only Swift file that imports it. */

/* Linux distributions install libffi's header as <ffi.h>; Apple's SDKs as <ffi/ffi.h>. */
#if __has_include(<ffi.h>)
#include <ffi.h>
#elif __has_include(<ffi/ffi.h>)
#include <ffi/ffi.h>
#else
#error "libffi's header was not found: install libffi-dev (Debian, Ubuntu) or libffi-devel (Fedora)"
#endif
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
/* NULL where libffi has no complex types on this platform. */
ffi_type *cffi_type_complex_float(void);
ffi_type *cffi_type_complex_double(void);
ffi_type *cffi_type_complex_longdouble(void);
/* NULL where the libffi built against has no 128-bit integer types (before 3.6). */
ffi_type *cffi_type_sint128(void);
ffi_type *cffi_type_uint128(void);

/* Stores `value` at `address` as a long double, which holds every double exactly (x87's 80 bits on x86_64,
   a quad on aarch64, which Swift has no type for). */
void cffi_store_long_double(double value, void *address);

/* The code libffi reaches for every call of a closure. */
typedef void (*cffi_closure_handler)(ffi_cif *cif, void *result, void **arguments, void *user_data);

/* A cif to prepare with cffi_prep_cif or cffi_prep_cif_var (zeroed; NULL when memory ran out), and its
   release. Only such a cif may be prepared by them and passed to cffi_call: it carries the plan of its
   calls (CallPlan.c). */
ffi_cif *cffi_cif_allocate(void);
void cffi_cif_free(ffi_cif *cif);
/* ffi_prep_cif with the platform's default ABI, then, where the register path runs
   (cffi_register_path_available), the plan of its calls; returns an ffi_status (FFI_OK is 0). */
int cffi_prep_cif(ffi_cif *cif, unsigned argument_count, ffi_type *result, ffi_type **arguments);
/* ffi_prep_cif_var: a call of a variadic function with `fixed_count` named arguments and these types after
   them (already promoted: libffi refuses float and integers narrower than int there). */
int cffi_prep_cif_var(ffi_cif *cif, unsigned fixed_count, unsigned argument_count, ffi_type *result,
                      ffi_type **arguments);

/* A closure: code C calls that runs `handler` with `user_data` through libffi's generic entry. Its code is a
   slot of DelegateKit's trampoline table (CDelegateKitTrampolines) entering libffi as a Go closure (the
   closure in the static-chain register), so it takes no writable+executable memory whatever libffi was
   built with; only where the table cannot be mapped does it come from ffi_closure_alloc. Where the
   register path runs (cffi_register_path_available, not suppressed on this thread) and every argument and
   the result is a scalar of at most 8 bytes, the slot enters cffi_enter_array (CDelegateKitTrampolines)
   instead of libffi's entry: the same handler, given the same argument array. Returns the
   closure (to free later) and stores its callable code in *code, or returns NULL (nothing allocated). */
void *cffi_closure_create(ffi_cif *cif, cffi_closure_handler handler, void *user_data, void **code);
void cffi_closure_free(void *closure);
/* Points a closure whose owner is gone at an entry that writes `message` to stderr and aborts, so a late
   call through a stale pointer stops loudly instead of running freed memory. The closure stays allocated
   until freed; `message` must outlive it. */
void cffi_closure_bury(void *closure, const char *message);
/* Sets the user data a closure passes to its handler (before C can call it). */
void cffi_closure_set_user_data(void *closure, void *user_data);
/* The closure's callable code, as cffi_closure_create stored it in *code. */
void *cffi_closure_code(const void *closure);
/* Whether the closure's code is a slot of the trampoline table (else libffi's closure memory). */
int cffi_closure_in_table(const void *closure);

/* ---- A closure in pack form (PackFunction.c) ----
   Swift's PackFunction keeps a typed closure of many parameters as a function value taking one pack, the
   array of its arguments' addresses, which is libffi's argument array as it is (cffi_call_pack in
   CDelegateKitTrampolines calls it so), or one of seven or eight parameters as a function of that many
   addresses (cffi_call_spread). cffi_pack_handler or cffi_spread_handler is such a closure's handler,
   with a cffi_pack_call as its user data: libffi's entry or cffi_enter_array reaches the closure's own thunk with no Swift code
   between them. */
typedef struct cffi_pack_call {
    /* The function value's two words, its code and its context. */
    const void *function;
    /* For cffi_spread_handler, the function's number of parameters, 7 or 8, each an address of its own (a
       fixed-arity closure in its most general form). */
    uint32_t spread;
    /* For an integer result narrower than ffi_arg, its libffi type code (FFI_TYPE_SINT8 ... UINT32): the
       handler widens it as libffi expects after the call. FFI_TYPE_VOID for any other result. */
    uint32_t result_type;
} cffi_pack_call;
void cffi_pack_handler(ffi_cif *cif, void *result, void **arguments, void *user_data);
void cffi_spread_handler(ffi_cif *cif, void *result, void **arguments, void *user_data);

/* Calls `function` as described by `cif`, with arguments in libffi's form. Integer results narrower than
   a register are written as a full ffi_arg, as libffi writes them. A cif with a plan (on x86_64 any
   signature of scalars, structs and `long double`; on aarch64 one of scalars and structs, a `long double`
   not among them) is called by it through
   cffi_call_block, unless the register path is suppressed on this thread; any other by ffi_call. */
void cffi_call(ffi_cif *cif, const void *function, void *result, void **arguments);
/* Whether cffi_call on this thread calls `cif` by its plan. */
int cffi_cif_planned(const ffi_cif *cif);

/* ---- The arguments a variadic closure was called with after its fixed ones (VariadicArguments.c) ----
   libffi's closures take a fixed list of arguments. A variadic callee finds the ones after its fixed
   arguments in the registers its fixed arguments left free, then on the stack, and so reads them by
   va_arg. So a variadic closure's cif is its fixed arguments padded with cffi_va_integer_registers()
   int64_t arguments and cffi_va_vector_registers() vector-register ones, less those the fixed ones take,
   then int64_t arguments the caller's stack holds: libffi then hands the closure the free registers'
   values and the address of the first stack argument, from which a va_list is made as va_start makes it.
   A vector register's padding is as wide as the widest variadic argument it may carry,
   cffi_va_vector_bytes() bytes: a double on x86_64 (a long double goes on the stack there), a long double
   on aarch64 (AAPCS64 passes one in a whole 16-byte q register). This relies on the stack argument's
   pointer being into the caller's frame, as libffi's x86_64 and aarch64 closures make it. The frame and
   its reader live in the closure's call, in memory of cffi_va_frame_size() bytes. */
unsigned cffi_va_integer_registers(void);
unsigned cffi_va_vector_registers(void);
unsigned cffi_va_vector_bytes(void);
size_t cffi_va_frame_size(void);
/* Fills `frame` from libffi's pointers to the padding arguments (`pads`: the integer ones, the vector ones,
   the stack one), with `integers_used` and `vectors_used` registers taken by the fixed arguments; the
   frame's reader starts at the first variadic argument. */
void cffi_va_frame_fill(void *frame, void *const *pads, unsigned integers_used, unsigned vectors_used);
/* Writes a va_list at the first variadic argument into `list`, of cffi_va_list_size() bytes. */
void cffi_va_frame_start(const void *frame, void *list);
size_t cffi_va_list_size(void);
/* The frame reader's next argument, read by va_arg as the type C's default promotions pass. */
int cffi_va_next_int(void *frame);
long long cffi_va_next_long_long(void *frame);
double cffi_va_next_double(void *frame);
void *cffi_va_next_pointer(void *frame);
#if defined(__x86_64__)
long double cffi_va_next_long_double(void *frame);
#endif

#endif
