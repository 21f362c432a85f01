/* The register path's trampoline in libffi's closure memory, and its probe; see RegisterTrampoline.h. */
#include "RegisterTrampoline.h"
#include "CDelegateKitLibffi.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local int register_path_suppressed = 0;

void cffi_register_path_suppress(int suppress) { register_path_suppressed = suppress; }

int cffi_register_path_suppressed(void) { return register_path_suppressed; }

#if defined(__x86_64__) && !defined(_WIN32)
/* endbr64 (a valid indirect-branch target under CET), the context into r9 (the sixth integer argument
   register, free since a register-only signature uses at most five) and a jump to the entry, both loaded
   from the closure's `user_data` and `fun` words after the code. Every other argument register is left
   as the caller set it, so the entry receives them in place. No stack access: the caller's alignment and
   red zone are untouched, and the entry returns straight to the C caller. */
static const unsigned char register_trampoline[32] = {
    0xf3, 0x0f, 0x1e, 0xfa,                    /* endbr64 */
    0x4c, 0x8b, 0x0d, 0, 0, 0, 0,              /* mov user_data(%rip), %r9 */
    0xff, 0x25, 0, 0, 0, 0,                    /* jmp *fun(%rip) */
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,  /* int3: never reached */
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
};

static void write_trampoline(ffi_closure *closure, cffi_register_entry entry, void *context) {
    /* The words first: a caller can only reach the code through an address published after this. */
    closure->user_data = context;
    closure->fun = (void (*)(ffi_cif *, void *, void **, void *))(void (*)(void))entry;
    unsigned char code[32];
    memcpy(code, register_trampoline, sizeof code);
    int32_t context_offset = (int32_t)offsetof(ffi_closure, user_data) - 11;
    int32_t entry_offset = (int32_t)offsetof(ffi_closure, fun) - 17;
    memcpy(code + 7, &context_offset, 4);
    memcpy(code + 13, &entry_offset, 4);
    memcpy(closure->tramp, code, sizeof code);
}

/* The probe's entry, also safe when libffi calls it as a closure handler (cif, result, arguments,
   user_data): then its sixth integer argument is not the probe's context. */
static char probe_context;

static cffi_registers probe_entry(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3, uint64_t i4, void *context,
                                  double d0, double d1, double d2, double d3, double d4, double d5, double d6,
                                  double d7) {
    (void)i2; (void)i3; (void)i4; (void)d0; (void)d1; (void)d2; (void)d3; (void)d4; (void)d5; (void)d6; (void)d7;
    cffi_registers registers = {0, 0};
    if (context == &probe_context) {
        registers.integer = i0 ^ 0x5a5a5a5a5a5a5a5aULL;
    } else {
        memset((void *)(uintptr_t)i1, 0, sizeof(ffi_arg)); /* libffi's result buffer: answer 0 */
    }
    return registers;
}

static void probe_handler(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    (void)cif; (void)arguments; (void)user_data;
    memset(result, 0, sizeof(ffi_arg));
}

static int register_path_available = 0;
static pthread_once_t register_path_once = PTHREAD_ONCE_INIT;

static void probe_register_path(void) {
    const char *setting = getenv("DELEGATEKIT_FAST_PATH");
    if (setting != NULL && strcmp(setting, "0") == 0) return;
    if (FFI_TRAMPOLINE_SIZE < sizeof register_trampoline) return;
    static ffi_cif cif;
    static ffi_type *arguments[1];
    arguments[0] = &ffi_type_uint64;
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 1, &ffi_type_uint64, arguments) != FFI_OK) return;
    void *code = NULL;
    ffi_closure *closure = ffi_closure_alloc(sizeof(ffi_closure), &code);
    if (closure == NULL) return;
    /* A working libffi closure first, so that whatever runs at `code` is safe to call. */
    if (ffi_prep_closure_loc(closure, &cif, probe_handler, NULL, code) == FFI_OK) {
        /* Restored before freeing: where libffi keeps a static trampoline's address there instead. */
        ffi_closure saved = *closure;
        write_trampoline(closure, probe_entry, &probe_context);
        uint64_t answer = ((uint64_t (*)(uint64_t))code)(0x0123456789abcdefULL);
        register_path_available = answer == (0x0123456789abcdefULL ^ 0x5a5a5a5a5a5a5a5aULL);
        *closure = saved;
    }
    ffi_closure_free(closure);
}

int cffi_register_path_available(void) {
    pthread_once(&register_path_once, probe_register_path);
    return register_path_available;
}

void *cffi_register_closure_create(cffi_register_entry entry, void *context, void **code) {
    if (!cffi_register_path_available() || register_path_suppressed) return NULL;
    void *executable = NULL;
    ffi_closure *closure = ffi_closure_alloc(sizeof(ffi_closure), &executable);
    if (closure == NULL) return NULL;
    write_trampoline(closure, entry, context);
    *code = executable;
    return closure;
}
#else
int cffi_register_path_available(void) { return 0; }

void *cffi_register_closure_create(cffi_register_entry entry, void *context, void **code) {
    (void)entry; (void)context; (void)code;
    return NULL;
}
#endif
