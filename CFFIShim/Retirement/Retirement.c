/* The records of calls in progress, and what happens to them when calls never return; see Retirement.h
   and, for the whole protocol, Sources/DelegateKit/Delegates/SlotTable/ (SlotChange.swift first). */
#define _GNU_SOURCE  /* pthread_getattr_np */
#include <CDelegateKitRetirement/Retirement.h>
#include <CDelegateKitExits/CallbackExit.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

_Thread_local cffi_thread_calls *cffi_current_calls __attribute__((tls_model("initial-exec"))) = NULL;
/* Never written: its first entry says a call is in progress, so cffi_enter_fast takes it for a nested call. */
cffi_thread_calls cffi_no_unfenced_calls = {.running = {&cffi_no_unfenced_calls}};
_Thread_local cffi_thread_calls *cffi_unfenced_calls __attribute__((tls_model("initial-exec"))) = &cffi_no_unfenced_calls;

/* Every record ever made; records of exited threads are reused, never freed, so a scan needs no lock. */
static cffi_thread_calls *all_calls = NULL;

/* ---- Fences ---- */

/* See cffi_removers_use_membarrier. */
static int cffi_calls_need_no_fence = 0;
static pthread_once_t membarrier_once = PTHREAD_ONCE_INIT;

static void register_membarrier(void) {
#if defined(__linux__) && defined(SYS_membarrier)
    long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return;
    cffi_calls_need_no_fence = 1;
#endif
}

int cffi_removers_use_membarrier(void) { return __atomic_load_n(&cffi_calls_need_no_fence, __ATOMIC_RELAXED); }

void cffi_synchronize_calls(void) {
    /* Every thread that can be running an object registered first, which ran this once too, so callers
       and removers agree on who fences. (A forked child inherits the registration.) */
    pthread_once(&membarrier_once, register_membarrier);
#if defined(__linux__) && defined(SYS_membarrier)
    if (cffi_calls_need_no_fence) {
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
        abort(); /* registered, so it cannot fail; a scan without the fence could free running code */
    }
#endif
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* How many calls the thread has in progress (see cffi_thread_calls.depth). */
static long calls_in_progress(const cffi_thread_calls *calls) {
    long depth = __atomic_load_n(&calls->depth, __ATOMIC_ACQUIRE);
    if (depth > 1) return depth;
    return __atomic_load_n(&calls->running[0], __ATOMIC_ACQUIRE) != NULL;
}

/* ---- The reclaimer's lock, condition and collector ---- */

static pthread_mutex_t reclaim_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reclaim_condition;
static void (*collector)(void) = NULL;

void cffi_reclaim_lock(void) { pthread_mutex_lock(&reclaim_mutex); }
void cffi_reclaim_unlock(void) { pthread_mutex_unlock(&reclaim_mutex); }
void cffi_reclaim_wake_all(void) { pthread_cond_broadcast(&reclaim_condition); }
int cffi_reclaim_wait(const struct timespec *deadline) {
    return pthread_cond_timedwait(&reclaim_condition, &reclaim_mutex, deadline);
}

void cffi_set_collector(void (*function)(void)) { __atomic_store_n(&collector, function, __ATOMIC_RELEASE); }

static void collect(void) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  /* this thread's records before the collector's scans */
    void (*function)(void) = __atomic_load_n(&collector, __ATOMIC_ACQUIRE);
    if (function != NULL) function();
}

/* Clears the reclaim bits of the calls this thread no longer runs, now that it runs `depth` calls, under
   the lock removers set them with; returns whether any was set. Without the lock when none is: a remover
   sets a bit before its own membarrier and collection, which then see this thread's record as it is. */
static int clear_reclaim_bits(cffi_thread_calls *calls, long depth) {
    unsigned long keep = CFFI_RECLAIM_THREAD_BITS
        | (depth > CFFI_CALL_DEPTH ? (1UL << CFFI_CALL_DEPTH) - 1 | CFFI_RECLAIM_OVERFLOW : (1UL << depth) - 1);
    if ((__atomic_load_n(&calls->reclaim, __ATOMIC_RELAXED) & ~keep) == 0) return 0;
    cffi_reclaim_lock();
    unsigned long old = __atomic_fetch_and(&calls->reclaim, keep, __ATOMIC_RELAXED);
    cffi_reclaim_unlock();
    return (old & ~keep) != 0;
}

/* Sets the thread's depth to `depth`, below what it was: the calls above are gone. Returns whether a
   remover had marked one of them (the caller then collects). */
static int drop_calls(cffi_thread_calls *calls, long depth) {
    long current = calls_in_progress(calls);
    long listed = current < CFFI_CALL_DEPTH ? current : CFFI_CALL_DEPTH;
    for (long i = listed - 1; i >= depth; i--) __atomic_store_n(&calls->running[i], NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&calls->depth, depth, __ATOMIC_RELEASE);  /* for a remover's judged overflow entry */
    if (depth <= 1 && (__atomic_load_n(&calls->reclaim, __ATOMIC_RELAXED) & CFFI_CALLS_NESTED)) {
        __atomic_fetch_and(&calls->reclaim, ~CFFI_CALLS_NESTED, __ATOMIC_RELAXED);
    }
    return clear_reclaim_bits(calls, depth);
}

/* ---- Where a thread is ---- */

/* Records the calling thread's stack and kernel thread id in its record (the main thread's stack, glibc
   reads from /proc: once). */
static void note_thread(cffi_thread_calls *calls) {
    uintptr_t low = 0, high = 0;
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
        void *base = NULL;
        size_t size = 0;
        pthread_attr_getstack(&attributes, &base, &size);
        pthread_attr_destroy(&attributes);
        low = (uintptr_t)base;
        high = low + size;
    }
    __atomic_store_n(&calls->stack_low, low, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->stack_high, high, __ATOMIC_RELAXED);
#if defined(__linux__) && defined(SYS_gettid)
    __atomic_store_n(&calls->tid, (long)syscall(SYS_gettid), __ATOMIC_RELAXED);
#endif
}

/* Whether `frame` lies on the stack of the record's thread. */
static int on_thread_stack(const cffi_thread_calls *calls, uintptr_t frame) {
    return frame >= __atomic_load_n(&calls->stack_low, __ATOMIC_RELAXED)
        && frame < __atomic_load_n(&calls->stack_high, __ATOMIC_RELAXED);
}

/* The word at `address`, on another thread's stack, read without faulting: that thread may exit and its
   stack go away meanwhile. Returns whether it could be read. */
static int read_word(uintptr_t address, uintptr_t *word) {
#if defined(__linux__)
    struct iovec local = {word, sizeof *word}, remote = {(void *)address, sizeof *word};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof *word;
#else
    (void)address; (void)word;
    return 0;
#endif
}

/* Where the record's thread (another one) is blocked in a system call right now: its stack pointer, when
   that lies on its own stack; 0 when it is running, or this cannot be told. A thread blocked there is not
   inside any call whose entry frame lies below that point, and never will be again. */
static uintptr_t blocked_stack_pointer(const cffi_thread_calls *calls) {
#if defined(__linux__)
    long tid = __atomic_load_n(&calls->tid, __ATOMIC_RELAXED);
    if (tid <= 0) return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
    int file = open(path, O_RDONLY | O_CLOEXEC);
    if (file < 0) return 0;
    char text[256];
    ssize_t count = read(file, text, sizeof text - 1);
    close(file);
    if (count <= 0) return 0;
    text[count] = 0;
    /* "NR ARG1 … ARG6 SP PC" while blocked in a system call; "running" otherwise. */
    if (text[0] < '0' || text[0] > '9') return 0;
    char *fields[10], *rest = NULL;
    int found = 0;
    for (char *cursor = strtok_r(text, " \n", &rest); cursor != NULL && found < 10; cursor = strtok_r(NULL, " \n", &rest)) {
        fields[found++] = cursor;
    }
    if (found != 9) return 0;
    uintptr_t stack_pointer = (uintptr_t)strtoull(fields[7], NULL, 16);
    return on_thread_stack(calls, stack_pointer) ? stack_pointer : 0;
#else
    (void)calls;
    return 0;
#endif
}

/* ---- Threads: registration, exit, fork ---- */

static pthread_key_t exit_key;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* Clears a record whose thread is gone, for another thread to reuse. */
static void clear_record(cffi_thread_calls *calls) {
    for (int i = 0; i < CFFI_CALL_DEPTH; i++) __atomic_store_n(&calls->running[i], NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->depth, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->reclaim, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->stack_low, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->stack_high, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->in_use, 0, __ATOMIC_RELEASE);
}

/* The thread exits, normally, by pthread_exit, or cancelled, possibly inside a call: nothing it ran is
   running any more. */
static void release_record(void *record) {
    cffi_thread_calls *calls = record;
    /* A later destructor of this thread that calls a closure registers afresh. */
    cffi_current_calls = NULL;
    cffi_unfenced_calls = &cffi_no_unfenced_calls;
    cffi_reclaim_lock();
    int marked = (__atomic_load_n(&calls->reclaim, __ATOMIC_RELAXED) & ~CFFI_RECLAIM_THREAD_BITS) != 0;
    clear_record(calls);
    cffi_reclaim_unlock();
    if (marked) collect();
}

static void setup(void);

/* Readers prefer themselves: a section nested in another (one lock taken inside another) never waits for
   a fork that waits for the outer one. */
static pthread_rwlock_t fork_gate;

static void make_fork_gate(void) {
    pthread_rwlockattr_t attributes;
    pthread_rwlockattr_init(&attributes);
    pthread_rwlockattr_setkind_np(&attributes, PTHREAD_RWLOCK_PREFER_READER_NP);
    pthread_rwlock_init(&fork_gate, &attributes);
    pthread_rwlockattr_destroy(&attributes);
}

void cffi_fork_gate_enter(void) {
    pthread_once(&setup_once, setup);
    pthread_rwlock_rdlock(&fork_gate);
}

void cffi_fork_gate_leave(void) { pthread_rwlock_unlock(&fork_gate); }

static void before_fork(void) {
    pthread_rwlock_wrlock(&fork_gate);
    cffi_reclaim_lock();
}

static void after_fork_in_parent(void) {
    cffi_reclaim_unlock();
    pthread_rwlock_unlock(&fork_gate);
}

static void make_reclaim_condition(void) {
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&reclaim_condition, &attributes);
    pthread_condattr_destroy(&attributes);
}

/* Only the forking thread lives on in the child: the other threads' calls will never return, and their
   waits on the reclaimer's condition are gone, so the lock and the condition start afresh. */
static void after_fork_in_child(void) {
    for (cffi_thread_calls *calls = __atomic_load_n(&all_calls, __ATOMIC_ACQUIRE); calls; calls = calls->next) {
        if (calls != cffi_current_calls && __atomic_load_n(&calls->in_use, __ATOMIC_RELAXED)) clear_record(calls);
    }
    if (cffi_current_calls != NULL) note_thread(cffi_current_calls);  /* a new thread id in the child */
    pthread_mutex_init(&reclaim_mutex, NULL);
    make_reclaim_condition();
    make_fork_gate();
}

static void setup(void) {
    pthread_key_create(&exit_key, release_record);
    make_reclaim_condition();
    make_fork_gate();
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

/* Makes the lock, condition and handlers before anything can use them. */
__attribute__((constructor)) static void setup_at_load(void) { pthread_once(&setup_once, setup); }

static cffi_thread_calls *register_thread(void) {
    pthread_once(&membarrier_once, register_membarrier);
    pthread_once(&setup_once, setup);
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
    record->fences = !cffi_calls_need_no_fence;
    note_thread(record);
    pthread_setspecific(exit_key, record);
    cffi_current_calls = record;
    cffi_unfenced_calls = record->fences ? &cffi_no_unfenced_calls : record;
    return record;
}

/* ---- Calls that a longjmp left ---- */

/* Whether the call whose entry had `entry_frame` and `return_address` is gone, judged from `frame`, the
   current one. Reads the entry's return address slot, which may lie in a live frame of the thread's:
   not a memory error, so hidden from AddressSanitizer. */
__attribute__((no_sanitize("address")))
static int left_without_returning(const cffi_thread_calls *calls, uintptr_t entry_frame, uintptr_t return_address,
                                  uintptr_t frame) {
    if (!on_thread_stack(calls, entry_frame)) return 0;
    if (entry_frame <= frame) return 1;
    return *(const volatile uintptr_t *)(entry_frame + sizeof(void *)) != return_address;
}

/* Forgets the calls that left without returning, judged from `frame`; calls still running enclose
   everything later, so the gone ones are the innermost. Returns whether a forgotten call had been marked
   for collection. */
static int forget_calls_below(cffi_thread_calls *calls, uintptr_t frame) {
    if (!on_thread_stack(calls, frame)) return 0;
    long depth = calls_in_progress(calls), from = depth;
    if (from > CFFI_CALL_DEPTH) {
        /* The unlisted calls are the innermost: while the first of them runs, everything does. */
        if (!left_without_returning(calls, calls->overflow_frame, calls->overflow_return, frame)) return 0;
        from = CFFI_CALL_DEPTH;
    }
    while (from > 0 && left_without_returning(calls, calls->frames[from - 1], calls->returns[from - 1], frame)) from--;
    if (from == depth) return 0;
    return drop_calls(calls, from);
}

void cffi_forget_calls_left_below(uintptr_t frame) {
    cffi_thread_calls *calls = cffi_current_calls;
    if (calls == NULL || calls_in_progress(calls) == 0) return;
    if (forget_calls_below(calls, frame)) collect();
}

/* ---- Entering and leaving, the rare cases ---- */

void cffi_enter_slow(const void *object, uintptr_t frame, uintptr_t return_address) {
    cffi_thread_calls *calls = cffi_current_calls;
    if (calls == NULL) calls = register_thread();
    if (calls_in_progress(calls) > 0 && forget_calls_below(calls, frame)) collect();
    long index = calls_in_progress(calls);
    /* The second call in progress makes the outermost one's end take the long way (cffi_leave_fast). */
    if (index == 1) __atomic_fetch_or(&calls->reclaim, CFFI_CALLS_NESTED, __ATOMIC_RELAXED);
    /* What a remover judges a call by is stored before what makes the call visible, which publishes it
       (see cffi_enter): for a listed call its frame and return address, then the depth counting it, then
       the entry; for the first unlisted one its frame and return address, then the depth. */
    if (index < CFFI_CALL_DEPTH) {
        __atomic_store_n(&calls->frames[index], frame, __ATOMIC_RELAXED);
        __atomic_store_n(&calls->returns[index], return_address, __ATOMIC_RELAXED);
        __atomic_store_n(&calls->depth, index + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&calls->running[index], object, __ATOMIC_RELEASE);
    } else {
        if (index == CFFI_CALL_DEPTH) {
            __atomic_store_n(&calls->overflow_frame, frame, __ATOMIC_RELAXED);
            __atomic_store_n(&calls->overflow_return, return_address, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&calls->depth, index + 1, __ATOMIC_RELEASE);
    }
    if (calls->fences) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    } else {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
}

void cffi_note_exit_request(void) {
    cffi_thread_calls *calls = cffi_current_calls;
    if (calls != NULL && calls_in_progress(calls) > 0) {
        __atomic_fetch_or(&calls->reclaim, CFFI_EXIT_REQUESTED, __ATOMIC_RELAXED);
    }
}

/* Takes the exit a closure of the call that just left asked for, if any; from the entry's frame, which
   cffi_leave is inlined into, so nothing of the closure's is left to skip. The note may outlive its
   request, which a CClosure's entry took (a jump from inside the call): then it is only cleared. */
static void take_requested_exit(cffi_thread_calls *calls) {
    if (__atomic_load_n(&calls->reclaim, __ATOMIC_RELAXED) & CFFI_EXIT_REQUESTED) {
        __atomic_fetch_and(&calls->reclaim, ~CFFI_EXIT_REQUESTED, __ATOMIC_RELAXED);
        cffi_exit_take();
    }
}

void cffi_leave_slow(uintptr_t frame) {
    cffi_thread_calls *calls = cffi_current_calls;
    long depth = calls_in_progress(calls);
    /* This call's entry is the one with its frame; entries above it have lower frames: calls a longjmp
       left, which never will leave. */
    long index = (depth < CFFI_CALL_DEPTH ? depth : CFFI_CALL_DEPTH) - 1;
    while (index >= 0 && calls->frames[index] < frame) index--;
    if (index < 0 || calls->frames[index] != frame) {
        /* A call past the list (the listed ones all enclose it). */
        if (depth <= CFFI_CALL_DEPTH) {
            take_requested_exit(calls);
            return;
        }
        index = depth - 1;
    }
    if (drop_calls(calls, index)) collect();
    take_requested_exit(calls);
}

void cffi_leave_outermost(void) {
    cffi_thread_calls *calls = cffi_current_calls;
    /* running[0], this call's, is NULL already; whatever is listed above it a longjmp left. */
    if (drop_calls(calls, 0)) collect();
    take_requested_exit(calls);
}

/* ---- Scans (removers) ---- */

/* Whether another thread's call, entered with `frame` and `return_address`, is gone: its return address
   slot holds something else (a call still running leaves it alone), or its thread is blocked in the
   kernel above it (`blocked`, found on first need). Errs only towards "still running". */
static int left_elsewhere(const cffi_thread_calls *calls, uintptr_t frame, uintptr_t return_address, uintptr_t *blocked) {
    uintptr_t word = 0;
    if (on_thread_stack(calls, frame) && read_word(frame + sizeof(void *), &word) && word != return_address) return 1;
    if (*blocked == (uintptr_t)-1) *blocked = blocked_stack_pointer(calls);
    return *blocked > frame;
}

/* Whether the record runs `object`; another thread's entries are judged (`judge`), in case a longjmp left
   them (see left_elsewhere). An entry judged gone is loaded again: when its call left by returning, its
   thread cleared it (a release store), and this acquire load orders that call's work before what the
   remover does next. What the judge saw through the kernel orders it in fact, but not for the memory
   model, nor for ThreadSanitizer. */
static int record_runs(const cffi_thread_calls *calls, const void *object, int judge) {
    long depth = calls_in_progress(calls);
    uintptr_t blocked = (uintptr_t)-1;  /* not looked up yet */
    if (depth > CFFI_CALL_DEPTH) {
        if (!judge) return 1;
        uintptr_t frame = __atomic_load_n(&calls->overflow_frame, __ATOMIC_RELAXED);
        uintptr_t return_address = __atomic_load_n(&calls->overflow_return, __ATOMIC_RELAXED);
        if (!left_elsewhere(calls, frame, return_address, &blocked)) return 1;
        (void)__atomic_load_n(&calls->depth, __ATOMIC_ACQUIRE);
        depth = CFFI_CALL_DEPTH;
    }
    for (long i = 0; i < depth; i++) {
        if (__atomic_load_n(&calls->running[i], __ATOMIC_ACQUIRE) != object) continue;
        if (!judge) return 1;
        uintptr_t frame = __atomic_load_n(&calls->frames[i], __ATOMIC_RELAXED);
        uintptr_t return_address = __atomic_load_n(&calls->returns[i], __ATOMIC_RELAXED);
        if (!left_elsewhere(calls, frame, return_address, &blocked)) return 1;
        (void)__atomic_load_n(&calls->running[i], __ATOMIC_ACQUIRE);
    }
    return 0;
}

int cffi_is_running(const void *object) {
    cffi_thread_calls *mine = cffi_current_calls;
    for (cffi_thread_calls *calls = __atomic_load_n(&all_calls, __ATOMIC_ACQUIRE); calls; calls = calls->next) {
        if (record_runs(calls, object, calls != mine)) return 1;
    }
    return 0;
}

int cffi_is_running_here(const void *object) {
    cffi_thread_calls *calls = cffi_current_calls;
    return calls != NULL && record_runs(calls, object, 0);
}

int cffi_any_call_in_progress(void) {
    for (cffi_thread_calls *calls = __atomic_load_n(&all_calls, __ATOMIC_ACQUIRE); calls; calls = calls->next) {
        if (calls_in_progress(calls) > 0) return 1;
    }
    return 0;
}

void cffi_mark_runners(const void *object) {
    for (cffi_thread_calls *calls = __atomic_load_n(&all_calls, __ATOMIC_ACQUIRE); calls; calls = calls->next) {
        unsigned long bits = 0;
        long depth = calls_in_progress(calls);
        if (depth > CFFI_CALL_DEPTH) {
            bits |= CFFI_RECLAIM_OVERFLOW;
            depth = CFFI_CALL_DEPTH;
        }
        for (long i = 0; i < depth; i++) {
            if (__atomic_load_n(&calls->running[i], __ATOMIC_ACQUIRE) == object) bits |= 1UL << i;
        }
        if (bits) __atomic_fetch_or(&calls->reclaim, bits, __ATOMIC_SEQ_CST);
    }
}

/* ---- Jumping back ---- */

long cffi_calls_in_progress_here(void) {
    return cffi_current_calls != NULL ? calls_in_progress(cffi_current_calls) : 0;
}

void cffi_forget_calls_from(long depth) {
    cffi_thread_calls *calls = cffi_current_calls;
    if (calls == NULL || calls_in_progress(calls) <= depth) return;
    if (drop_calls(calls, depth)) collect();
}
