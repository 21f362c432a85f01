/* libffi, wrapped; see CDelegateKitLibffi/Libffi.h. */
#include <CDelegateKitLibffi/Libffi.h>
#include <CDelegateKitTrampolines/Trampolines.h>

#include "Classes.h"

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

/* A closure's record: what its code reaches. As a Go closure, libffi's entry receives the record (the slot
   put it in the static-chain register) as its closure; as libffi's own closure, as its user data; through
   cffi_enter_array, the slot's context is the record's `array`. */
typedef struct closure_record {
    ffi_go_closure go;  /* first: libffi's Go entry reads it through the static-chain register */
    cffi_array_entry array;  /* the handler and its user data, whichever entry runs them */
    void *slot;              /* the trampoline slot, when the code is one */
    ffi_closure *libffi;     /* libffi's closure, when the code is its memory */
    void *code;              /* what C calls, either way */
    /* then, for cffi_enter_array, the places of the arguments */
} closure_record;

static void enter_record(ffi_cif *cif, void *result, void **arguments, void *record) {
    closure_record *closure = record;
    ((cffi_closure_handler)closure->array.handler)(cif, result, arguments, closure->array.user_data);
}

static void dead_call(ffi_cif *cif, void *result, void **arguments, void *message) {
    (void)cif; (void)result; (void)arguments;
    fprintf(stderr, "%s\n", (const char *)message);
    fflush(stderr);
    abort();
}

/* Fills `array`'s frame, count, places (at `places`, one byte per argument) and result for `cif`, and
   returns the array entry that serves it; or returns NULL where libffi's entry must run: an argument or
   result the entry does not take (Trampolines.h), another ABI, too many arguments, or a platform without
   the entry. */
static const void *array_places(const ffi_cif *cif, cffi_array_entry *array, uint8_t *places) {
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__linux__)
    if (cif->abi != FFI_DEFAULT_ABI || cif->nargs > CFFI_ARRAY_MAX_ARGUMENTS) return NULL;
    const void *entry = (const void *)cffi_enter_array;
    unsigned count = cif->nargs;
    unsigned frame = (CFFI_ARRAY_BLOCK + 8 * count + 15) / 16 * 16;
    unsigned integers = 0, vectors = 0, stack = 0;
    if (cif->rtype->type != FFI_TYPE_VOID && scalar_class(cif->rtype) == 0) {
#if defined(__x86_64__)
        int classes[2], eightbytes, class;
        entry = (const void *)cffi_enter_array_composite;
        if (cif->rtype->type == FFI_TYPE_LONGDOUBLE) {
            array->result = CFFI_ARRAY_RESULT_X87;
        } else if (cif->rtype->type != FFI_TYPE_STRUCT || !classify_struct(cif->rtype, classes, &eightbytes, &class)) {
            return NULL;
        } else if (eightbytes == 0) {
            array->result = CFFI_ARRAY_RESULT_MEMORY;
            integers = 1;  /* rdi holds the result's address */
        } else {
            array->result = class != 0 || eightbytes == 1 ? CFFI_ARRAY_RESULT_PAIR
                : classes[0] == eightbyte_integer ? CFFI_ARRAY_RESULT_INTEGER_SSE : CFFI_ARRAY_RESULT_SSE_INTEGER;
        }
#else
        return NULL;
#endif
    }
    for (unsigned index = 0; index < count; index++) {
        const ffi_type *type = cif->arg_types[index];
        unsigned place;
        switch (scalar_class(type)) {
        case 1:
            place = integers < CFFI_ARRAY_INTEGERS ? integers++ : frame / 8 + 2 + stack++;
            break;
        case 2:
            place = vectors < 8 ? CFFI_ARRAY_INTEGERS + vectors++ : frame / 8 + 2 + stack++;
            break;
        default: {
#if defined(__x86_64__)
            int classes[2], eightbytes = 0, class = 0;
            /* A long double travels in memory, as a struct holding one does. */
            if (type->type != FFI_TYPE_LONGDOUBLE &&
                (type->type != FFI_TYPE_STRUCT || !classify_struct(type, classes, &eightbytes, &class))) return NULL;
            if (eightbytes > 0 && class == 0) return NULL;  /* two classes: not contiguous in the block */
            if (class == eightbyte_integer && integers + eightbytes <= CFFI_ARRAY_INTEGERS) {
                place = integers;
                integers += eightbytes;
            } else if (class == eightbyte_sse && vectors + eightbytes <= 8) {
                place = CFFI_ARRAY_INTEGERS + vectors;
                vectors += eightbytes;
            } else {
                /* In the caller's stack words, whole: in memory, or its registers ran out (which leaves
                   them to the arguments after it). Aligned as it is, to 16 at most. */
                if (type->alignment > 8) stack += stack % 2;
                place = frame / 8 + 2 + stack;
                stack += (unsigned)((type->size + 7) / 8);
            }
            break;
#else
            return NULL;
#endif
        }
        }
        if (place > UINT8_MAX) return NULL;
        places[index] = (uint8_t)place;
    }
    array->frame = frame;
    array->count = count;
    array->places = places;
    return entry;
#else
    (void)cif; (void)array; (void)places;
    return NULL;
#endif
}

void *cffi_closure_create(ffi_cif *cif, cffi_closure_handler handler, void *user_data, void **code) {
    unsigned places = cif->nargs <= CFFI_ARRAY_MAX_ARGUMENTS ? cif->nargs : 0;
    closure_record *closure = calloc(1, sizeof *closure + places);
    if (closure == NULL) return NULL;
    closure->array.handler = (void (*)(void *, void *, void **, void *))handler;
    closure->array.user_data = user_data;
    closure->array.cif = cif;
    /* The array entry only where the register path runs, so that DELEGATEKIT_FAST_PATH=0 and the tests'
       switch (cffi_register_path_suppress) leave every call to libffi's entry. */
    const void *entry = NULL;
    if (cffi_register_path_available() && !cffi_register_path_suppressed() &&
        (entry = array_places(cif, &closure->array, (uint8_t *)(closure + 1))) != NULL) {
        closure->slot = cffi_trampoline_create(CFFI_TRAMPOLINE_STATIC_CHAIN, entry, &closure->array, &closure->code);
    }
#if FFI_GO_CLOSURES
    if (closure->slot == NULL && ffi_prep_go_closure(&closure->go, cif, enter_record) == FFI_OK) {
        closure->slot = cffi_trampoline_create(CFFI_TRAMPOLINE_STATIC_CHAIN, (const void *)closure->go.tramp, closure, &closure->code);
    }
#endif
    if (closure->slot == NULL) {
        closure->libffi = ffi_closure_alloc(sizeof(ffi_closure), &closure->code);
        if (closure->libffi == NULL ||
            ffi_prep_closure_loc(closure->libffi, cif, enter_record, closure, closure->code) != FFI_OK) {
            if (closure->libffi != NULL) ffi_closure_free(closure->libffi);
            free(closure);
            return NULL;
        }
    }
    *code = closure->code;
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
        closure->array.user_data = (void *)message;
        closure->array.handler = (void (*)(void *, void *, void **, void *))dead_call;
    }
}

void cffi_closure_set_user_data(void *record, void *user_data) { ((closure_record *)record)->array.user_data = user_data; }

void *cffi_closure_code(const void *record) { return ((const closure_record *)record)->code; }

int cffi_closure_in_table(const void *record) { return ((const closure_record *)record)->slot != NULL; }
