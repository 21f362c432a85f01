/* libffi, wrapped; see CDelegateKitLibffi/Libffi.h. */
#include <CDelegateKitLibffi/Libffi.h>
#include <CDelegateKitTrampolines/Trampolines.h>

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

/* A closure's record: what its code reaches. As a Go closure, libffi's entry receives the record (the slot
   put it in the static-chain register) as its closure; as libffi's own closure, as its user data. */
typedef struct closure_record {
    ffi_go_closure go;  /* first: libffi's Go entry reads it through the static-chain register */
    cffi_closure_handler handler;
    void *user_data;
    void *slot;              /* the trampoline slot, when the code is one */
    ffi_closure *libffi;     /* libffi's closure, when the code is its memory */
} closure_record;

static void enter_record(ffi_cif *cif, void *result, void **arguments, void *record) {
    closure_record *closure = record;
    closure->handler(cif, result, arguments, closure->user_data);
}

static void dead_call(ffi_cif *cif, void *result, void **arguments, void *message) {
    (void)cif; (void)result; (void)arguments;
    fprintf(stderr, "%s\n", (const char *)message);
    fflush(stderr);
    abort();
}

void *cffi_closure_create(ffi_cif *cif, cffi_closure_handler handler, void *user_data, void **code) {
    closure_record *closure = calloc(1, sizeof *closure);
    if (closure == NULL) return NULL;
    closure->handler = handler;
    closure->user_data = user_data;
#if FFI_GO_CLOSURES
    if (ffi_prep_go_closure(&closure->go, cif, enter_record) == FFI_OK) {
        closure->slot = cffi_trampoline_create(CFFI_TRAMPOLINE_STATIC_CHAIN, (const void *)closure->go.tramp, closure, code);
        if (closure->slot != NULL) return closure;
    }
#endif
    void *executable = NULL;
    closure->libffi = ffi_closure_alloc(sizeof(ffi_closure), &executable);
    if (closure->libffi == NULL || ffi_prep_closure_loc(closure->libffi, cif, enter_record, closure, executable) != FFI_OK) {
        if (closure->libffi != NULL) ffi_closure_free(closure->libffi);
        free(closure);
        return NULL;
    }
    *code = executable;
    return closure;
}

void cffi_closure_free(void *record) {
    closure_record *closure = record;
    if (closure->slot != NULL) cffi_trampoline_free(closure->slot);
    if (closure->libffi != NULL) ffi_closure_free(closure->libffi);
    free(closure);
}

void cffi_closure_bury(void *record, const char *message) {
    closure_record *closure = record;
    if (closure->slot != NULL) {
        cffi_trampoline_bury(closure->slot, message);  /* no longer reaches libffi at all */
    } else {
        closure->user_data = (void *)message;
        closure->handler = dead_call;
    }
}

void cffi_closure_set_user_data(void *record, void *user_data) { ((closure_record *)record)->user_data = user_data; }

int cffi_closure_in_table(const void *record) { return ((const closure_record *)record)->slot != NULL; }

void cffi_call(ffi_cif *cif, const void *function, void *result, void **arguments) {
    ffi_call(cif, FFI_FN(function), result, arguments);
}
