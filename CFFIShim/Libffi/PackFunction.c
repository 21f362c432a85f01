#include <CDelegateKitLibffi/Libffi.h>
#include <CDelegateKitTrampolines/Trampolines.h>

/* The C half of Sources/DelegateKit/Closures/PackFunction.swift: libffi's handler for a closure kept in
   pack form, so that a call goes from libffi's entry (or cffi_enter_array) to the closure's own
   reabstraction thunk through this function and cffi_call_pack alone, with no Swift code between. */

void cffi_pack_handler(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    (void)cif;
    const cffi_pack_call *call = user_data;
    cffi_call_pack(call->function, arguments, result);
    /* libffi wants an integer result narrower than a register as a whole ffi_arg. */
    switch (call->result_type) {
    case FFI_TYPE_SINT8: *(int64_t *)result = *(int8_t *)result; break;
    case FFI_TYPE_UINT8: *(uint64_t *)result = *(uint8_t *)result; break;
    case FFI_TYPE_SINT16: *(int64_t *)result = *(int16_t *)result; break;
    case FFI_TYPE_UINT16: *(uint64_t *)result = *(uint16_t *)result; break;
    case FFI_TYPE_SINT32: *(int64_t *)result = *(int32_t *)result; break;
    case FFI_TYPE_UINT32: *(uint64_t *)result = *(uint32_t *)result; break;
    default: break;
    }
}
