#include <CDelegateKitLibffi/Libffi.h>
#include <CDelegateKitTrampolines/Trampolines.h>

/* The C half of Sources/DelegateKit/Closures/PackFunction.swift: libffi's handlers for a closure kept in
   pack form or in its most general form, so that a call goes from libffi's entry (or cffi_enter_array) to
   the closure's own reabstraction thunk through one of these and one piece of assembly alone, with no
   Swift code between. Two handlers rather than one that tests the form: chosen when the closure is made. */

/* libffi wants an integer result narrower than a register as a whole ffi_arg. */
static inline void widen(void *result, uint32_t result_type) {
    switch (result_type) {
    case FFI_TYPE_SINT8: *(int64_t *)result = *(int8_t *)result; break;
    case FFI_TYPE_UINT8: *(uint64_t *)result = *(uint8_t *)result; break;
    case FFI_TYPE_SINT16: *(int64_t *)result = *(int16_t *)result; break;
    case FFI_TYPE_UINT16: *(uint64_t *)result = *(uint16_t *)result; break;
    case FFI_TYPE_SINT32: *(int64_t *)result = *(int32_t *)result; break;
    case FFI_TYPE_UINT32: *(uint64_t *)result = *(uint32_t *)result; break;
    default: break;
    }
}

void cffi_pack_handler(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    (void)cif;
    const cffi_pack_call *call = user_data;
    cffi_call_pack(call->function, arguments, result);
    widen(result, call->result_type);
}

void cffi_spread_handler(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    (void)cif;
    const cffi_pack_call *call = user_data;
    cffi_call_spread(call->function, arguments, call->spread, result);
    widen(result, call->result_type);
}
