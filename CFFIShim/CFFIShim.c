#include "CFFIShim.h"

#include <pthread.h>
#include <sched.h>
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

int cffi_prep_cif(ffi_cif *cif, unsigned argument_count, ffi_type *result, ffi_type **arguments) {
    return (int)ffi_prep_cif(cif, FFI_DEFAULT_ABI, argument_count, result, arguments);
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

void cffi_store_pointer(void **slot, const void *value) {
    __atomic_store_n(slot, (void *)value, __ATOMIC_RELEASE);
}

const void *cffi_load_pointer(void *const *slot) {
    return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

_Thread_local cffi_thread_calls *cffi_current_calls __attribute__((tls_model("initial-exec"))) = NULL;

/* Every record ever made; records of exited threads are reused, never freed, so a scan needs no lock. */
static cffi_thread_calls *all_calls = NULL;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void release_record(void *record) {
    /* A later destructor of this thread that calls a closure registers afresh. */
    cffi_current_calls = NULL;
    __atomic_store_n(&((cffi_thread_calls *)record)->in_use, 0, __ATOMIC_RELEASE);
}

static void make_exit_key(void) { pthread_key_create(&exit_key, release_record); }

cffi_thread_calls *cffi_register_thread(void) {
    cffi_thread_calls *record = NULL;
    for (cffi_thread_calls *candidate = __atomic_load_n(&all_calls, __ATOMIC_ACQUIRE); candidate; candidate = candidate->next) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&candidate->in_use, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            record = candidate;
            break;
        }
    }
    if (record == NULL) {
        record = calloc(1, sizeof *record);
        if (record == NULL) abort(); /* a callback cannot report failure to its C caller */
        record->in_use = 1;
        record->next = __atomic_load_n(&all_calls, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&all_calls, &record->next, record, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
    }
    record->depth = 0;
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, record);
    cffi_current_calls = record;
    return record;
}

/* A thread's first call registers it, then starts over; kept out of line so that the common path
   needs no registers saved around the registration. */
static __attribute__((noinline)) void guarded_entry_first_call(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    cffi_register_thread();
    cffi_guarded_entry(cif, result, arguments, user_data);
}

void cffi_guarded_entry(ffi_cif *cif, void *result, void **arguments, void *user_data) {
    if (__builtin_expect(cffi_current_calls == NULL, 0)) {
        guarded_entry_first_call(cif, result, arguments, user_data);
        return;
    }
    cffi_guard *guard = user_data;
    long token = cffi_enter(guard);
    if (__builtin_expect(!__atomic_load_n(&guard->retired, __ATOMIC_SEQ_CST), 1)) {
        guard->handler(cif, result, arguments, guard->user_data);
    } else {
        /* Removed since C loaded the slot: behave as if C had loaded it a moment later. */
        const void *function = __atomic_load_n(guard->slot, __ATOMIC_ACQUIRE);
        if (function != NULL) {
            ffi_call(cif, FFI_FN(function), result, arguments);
        } else {
            size_t size = cif->rtype->size < sizeof(ffi_arg) ? sizeof(ffi_arg) : cif->rtype->size;
            memset(result, 0, size);
        }
    }
    cffi_leave(token);
}

void cffi_guard_retire(cffi_guard *guard) { __atomic_store_n(&guard->retired, 1, __ATOMIC_SEQ_CST); }

void cffi_guard_publish(cffi_guard *guard) { __atomic_store_n(&guard->retired, 0, __ATOMIC_SEQ_CST); }

static int is_running(cffi_thread_calls *record, const void *object) {
    if (__atomic_load_n(&record->overflow, __ATOMIC_SEQ_CST) > 0) return 1;
    for (int i = 0; i < CFFI_CALL_DEPTH; i++) {
        if (__atomic_load_n(&record->running[i], __ATOMIC_SEQ_CST) == object) return 1;
    }
    return 0;
}

int cffi_is_running_elsewhere(const void *object) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    cffi_thread_calls *mine = cffi_current_calls;
    for (cffi_thread_calls *record = __atomic_load_n(&all_calls, __ATOMIC_ACQUIRE); record; record = record->next) {
        if (record != mine && is_running(record, object)) return 1;
    }
    return 0;
}

int cffi_is_running_here(const void *object) {
    cffi_thread_calls *mine = cffi_current_calls;
    return mine != NULL && is_running(mine, object);
}

int cffi_is_running(const void *object) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (cffi_thread_calls *record = __atomic_load_n(&all_calls, __ATOMIC_ACQUIRE); record; record = record->next) {
        if (is_running(record, object)) return 1;
    }
    return 0;
}
