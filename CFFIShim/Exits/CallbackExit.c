/* See CallbackExit.h. */
#include <CDelegateKitExits/CallbackExit.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { exit_none, exit_jump, exit_call };

typedef struct exit_request {
    int kind;
    struct __jmp_buf_tag *target;
    int value;
    ffi_cif *cif;
    const void *function;
    /* The call's argument values, each in a 16-aligned slot, and libffi's pointers to them. */
    _Alignas(16) unsigned char bytes[CFFI_EXIT_BYTES];
    void *pointers[CFFI_EXIT_BYTES / 16];
} exit_request;

static _Thread_local exit_request request;

void cffi_exit_request_jump(struct __jmp_buf_tag *target, int value) {
    request.kind = exit_jump;
    request.target = target;
    request.value = value;
}

/* The bytes an argument of `size` bytes takes in the request: a 16-aligned slot, one at least. */
static size_t slot_size(size_t size) { return size == 0 ? 16 : (size + 15) / 16 * 16; }

int cffi_exit_request_call(ffi_cif *cif, const void *function, void **arguments) {
    if (cif->rtype->size > CFFI_EXIT_RESULT_BYTES) return -1;
    size_t needed = 0;
    for (unsigned i = 0; i < cif->nargs; i++) needed += slot_size(cif->arg_types[i]->size);
    if (needed > CFFI_EXIT_BYTES) return -1;
    size_t offset = 0;
    for (unsigned i = 0; i < cif->nargs; i++) {
        memcpy(request.bytes + offset, arguments[i], cif->arg_types[i]->size);
        request.pointers[i] = request.bytes + offset;
        offset += slot_size(cif->arg_types[i]->size);
    }
    request.kind = exit_call;
    request.cif = cif;
    request.function = function;
    return 0;
}

void cffi_exit_take(void) {
    const int kind = request.kind;
    if (kind == exit_none) return;
    request.kind = exit_none;
    if (kind == exit_jump) longjmp(request.target, request.value);
    /* Room for any result, in case the function returns after all. */
    _Alignas(16) unsigned char result[CFFI_EXIT_RESULT_BYTES];
    cffi_call(request.cif, request.function, result, request.pointers);
    fprintf(stderr, "DelegateKit: the C function a CallbackExit.call asked for returned; it must never return "
                    "(it should longjmp, as png_error and lua_error do), and the callback cannot go on\n");
    fflush(stderr);
    abort();
}

int cffi_call_catching_jump(struct __jmp_buf_tag *target, ffi_cif *cif, const void *function, void *result,
                            void **arguments) {
    int value = setjmp(target);
    if (value == 0) {
        cffi_call(cif, function, result, arguments);
        return 0;
    }
    return value;
}
