/* libffi, wrapped; see CDelegateKitLibffi.h. */
#include "CDelegateKitLibffi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ffi_type *cffi_type_void(void) { return &ffi_type_void; }
ffi_type *cffi_type_uint8(void) { return &ffi_type_uint8; }
ffi_type *cffi_type_sint8(void) { return &ffi_type_sint8; }
ffi_type *cffi_type_uint16(void) { return &ffi_type_uint16; }
ffi_type *cffi_type_sint16(void) { return &ffi_type_sint16; }
ffi_type *cffi_type_uint32(void) { return &ffi_type_uint32; }
ffi_type *cffi_type_sint32(void) { return &ffi_type_sint32; }
ffi_type *cffi_type_uint64(void) { return &ffi_type_uint64; }
ffi_type *cffi_type_sint64(void) { return &ffi_type_sint64; }
ffi_type *cffi_type_float(void) { return &ffi_type_float; }
ffi_type *cffi_type_double(void) { return &ffi_type_double; }
ffi_type *cffi_type_longdouble(void) { return &ffi_type_longdouble; }
ffi_type *cffi_type_pointer(void) { return &ffi_type_pointer; }
#ifdef FFI_TARGET_HAS_COMPLEX_TYPE
ffi_type *cffi_type_complex_float(void) { return &ffi_type_complex_float; }
ffi_type *cffi_type_complex_double(void) { return &ffi_type_complex_double; }
ffi_type *cffi_type_complex_longdouble(void) { return &ffi_type_complex_longdouble; }
#else
ffi_type *cffi_type_complex_float(void) { return NULL; }
ffi_type *cffi_type_complex_double(void) { return NULL; }
ffi_type *cffi_type_complex_longdouble(void) { return NULL; }
#endif
/* libffi 3.6 and later, where the target passes 128-bit integers. */
#ifdef FFI_TARGET_HAS_INT128
ffi_type *cffi_type_sint128(void) { return &ffi_type_sint128; }
ffi_type *cffi_type_uint128(void) { return &ffi_type_uint128; }
#else
ffi_type *cffi_type_sint128(void) { return NULL; }
ffi_type *cffi_type_uint128(void) { return NULL; }
#endif

void cffi_store_long_double(double value, void *address) {
    long double wide = value;
    memcpy(address, &wide, sizeof wide);
}

int cffi_prep_cif(ffi_cif *cif, unsigned argument_count, ffi_type *result, ffi_type **arguments) {
    return (int)ffi_prep_cif(cif, FFI_DEFAULT_ABI, argument_count, result, arguments);
}

int cffi_prep_cif_var(ffi_cif *cif, unsigned fixed_count, unsigned argument_count, ffi_type *result,
                      ffi_type **arguments) {
    return (int)ffi_prep_cif_var(cif, FFI_DEFAULT_ABI, fixed_count, argument_count, result, arguments);
}

void *cffi_closure_create(ffi_cif *cif, cffi_closure_handler handler, void *user_data, void **code) {
    void *executable = NULL;
    ffi_closure *closure = ffi_closure_alloc(sizeof(ffi_closure), &executable);
    if (closure == NULL) return NULL;
    if (ffi_prep_closure_loc(closure, cif, handler, user_data, executable) != FFI_OK) {
        ffi_closure_free(closure);
        return NULL;
    }
    *code = executable;
    return closure;
}

void cffi_closure_free(void *closure) { ffi_closure_free(closure); }

static void dead_call(ffi_cif *cif, void *result, void **arguments, void *message) {
    (void)cif; (void)result; (void)arguments;
    fprintf(stderr, "%s\n", (const char *)message);
    fflush(stderr);
    abort();
}

int cffi_closure_bury(void *closure, ffi_cif *cif, void *code, const char *message) {
    return ffi_prep_closure_loc(closure, cif, dead_call, (void *)message, code) == FFI_OK ? 0 : -1;
}

void cffi_closure_set_user_data(void *closure, void *user_data) { ((ffi_closure *)closure)->user_data = user_data; }

void cffi_call(ffi_cif *cif, const void *function, void *result, void **arguments) {
    ffi_call(cif, FFI_FN(function), result, arguments);
}
