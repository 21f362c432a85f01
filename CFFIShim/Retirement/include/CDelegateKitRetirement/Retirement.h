#ifndef CDELEGATEKIT_RETIREMENT_H
#define CDELEGATEKIT_RETIREMENT_H

/* The C half of how a change of a slot lets go of what it removed without waiting for other threads
   (the Swift half, and the whole protocol in prose, is Sources/DelegateKit/Delegates/SlotTable/, SlotChange.swift first).

   Each thread that runs a slot's closure has a record of what its calls in progress run: a stack of
   hazard pointers, pushed by cffi_enter and popped by cffi_leave. A call publishes what it runs with a
   plain store, then checks that it was not retired; a remover retires, makes every running thread
   execute a full fence (membarrier), then scans the records: one of the two always sees the other.
   What no record holds is released at once. What some record holds is deferred: the remover marks the
   record's entry, and the thread releases it when that call leaves (cffi_leave tests one bit).

   Calls that never return are allowed for: a call left by longjmp is forgotten when its thread enters
   again from a frame at or above it, changes something, lands at DelegateKit's setjmp site (whose caller
   forgets them: cffi_forget_calls_from), or exits; a thread
   that exits or is cancelled inside a call has its record cleared by its exit; a forked child clears
   the records of the threads it does not have. */

#include <stdint.h>
#include <time.h>

#define CFFI_CALL_DEPTH 16
/* The bit of cffi_thread_calls.reclaim that stands for the calls nested deeper than CFFI_CALL_DEPTH. */
#define CFFI_RECLAIM_OVERFLOW (1UL << CFFI_CALL_DEPTH)
/* The bit of cffi_thread_calls.reclaim that says a closure of the innermost call asked to leave it
   (CallbackExit.h): cffi_leave, which tests the word anyway, then takes the exit once the call has left,
   so a slot's calls pay nothing for being able to leave. The thread sets and clears it itself, by atomic
   read-modify-writes that need no lock; removers never touch it. */
#define CFFI_EXIT_REQUESTED (1UL << (CFFI_CALL_DEPTH + 1))
/* The bit of cffi_thread_calls.reclaim that says two or more calls are in progress (depth > 1), set and
   cleared by the thread as its depth crosses 1: so that the end of an outermost call (cffi_leave_fast)
   tests one word for everything that asks more of it than a store, calls above it that a longjmp left
   among them. Removers never touch it. */
#define CFFI_CALLS_NESTED (1UL << (CFFI_CALL_DEPTH + 2))
/* The bits a thread keeps for itself; the others mark what removers deferred. */
#define CFFI_RECLAIM_THREAD_BITS (CFFI_EXIT_REQUESTED | CFFI_CALLS_NESTED)

typedef struct cffi_thread_calls {
    /* What each call in progress runs, outermost first. running[0] alone tells whether a call is in
       progress, so that the outermost call, the common one, never touches `depth`. */
    const void *running[CFFI_CALL_DEPTH];
    /* The frame address of each call's entry, and the return address its frame holds: a call still
       running encloses everything its thread does later and its frame is left alone, so a later frame at
       or above it, or another value in its return address slot, proves that the call left without
       returning (longjmp). The slot test can only err towards "still running". */
    uintptr_t frames[CFFI_CALL_DEPTH];
    uintptr_t returns[CFFI_CALL_DEPTH];
    /* The number of calls in progress when two or more are (nested calls); 0 or 1 otherwise, and then
       running[0] says. Written by its thread only. Past CFFI_CALL_DEPTH the calls are not listed and count
       as running anything, so removers defer everything until the thread comes back up. */
    long depth;
    uintptr_t overflow_frame, overflow_return;  /* of call number CFFI_CALL_DEPTH, the first one not listed */
    /* Bit i: running[i] is something a remover deferred, to be collected when that call leaves (bit
       CFFI_CALL_DEPTH for the calls not listed). Set and cleared only under the reclaimer's lock; but for
       CFFI_RECLAIM_THREAD_BITS, the thread's own, which it changes by atomic read-modify-writes. */
    unsigned long reclaim;
    /* Whether calls fence themselves (no membarrier here): !cffi_removers_use_membarrier() when the thread
       registered. Such a thread's calls all take cffi_enter_slow (its cffi_unfenced_calls is
       cffi_no_unfenced_calls). */
    int fences;
    /* The thread's stack, found when it registers: frames elsewhere (an alternate signal stack, a
       coroutine's) are never judged abandoned. Its kernel thread id, for other threads to see where it
       is blocked (/proc/self/task/TID/syscall). Written by its thread only. */
    uintptr_t stack_low, stack_high;
    long tid;
    int in_use;
    struct cffi_thread_calls *next;
} cffi_thread_calls;

extern _Thread_local cffi_thread_calls *cffi_current_calls __attribute__((tls_model("initial-exec")));
/* The same record where calls need not fence themselves (see below), else cffi_no_unfenced_calls, a record
   that always has a call in progress: so that cffi_enter_fast's one test, of the record's first entry,
   sends those calls, and a thread's first, to cffi_enter_slow. */
extern cffi_thread_calls cffi_no_unfenced_calls;
extern _Thread_local cffi_thread_calls *cffi_unfenced_calls __attribute__((tls_model("initial-exec")));

/* Whether removers pay for the ordering calls need (Linux's membarrier(2), registered on first use):
   then a call publishes what it runs with a plain store, and a remover makes every running thread
   execute a full fence before it scans (cffi_synchronize_calls). Otherwise each call fences itself.
   Decided by the first removal; 0 before it. */
int cffi_removers_use_membarrier(void);

/* The rare paths of cffi_enter and cffi_leave, out of line. */
void cffi_enter_slow(const void *object, uintptr_t frame, uintptr_t return_address);
void cffi_leave_slow(uintptr_t frame);

/* Where a call is recorded and judged: the frame of the entry function these inline functions are
   inlined into, and the return address that frame holds. The functions below that pass them to a rare
   path read them first, as values the compiler cannot see through (the empty asm), so that it can
   neither move the reading into the rare path nor read them again there. An optimizing C compiler moves
   an entry's rare paths into functions of their own (clang's hot/cold splitting, at -O1 and above, makes
   `cffi_guarded_entry.cold.1`), and a frame read there is that short-lived function's, whose return
   address slot the entry's next call overwrites: a remover then judged the running call left by longjmp
   and released what it ran (issue 57). Read in the entry's first block, which is never moved, the values
   reach moved code as arguments. */
static inline __attribute__((always_inline)) uintptr_t cffi_this_frame(void) {
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
    __asm__ volatile("" : "+r"(frame));
    return frame;
}

static inline __attribute__((always_inline)) uintptr_t cffi_this_return_address(void) {
    uintptr_t address = (uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" : "+r"(address));
    return address;
}

/* Records the thread's outermost call, of `object`, entered at `frame` with `return_address`. */
static inline __attribute__((always_inline)) void cffi_record_outermost(cffi_thread_calls *calls, const void *object,
                                                                        uintptr_t frame, uintptr_t return_address) {
    /* Frame and return address before the entry, which publishes them: a remover that sees the entry
       judges it by this call's frame, never by the previous call's (relaxed atomic stores are plain moves). */
    __atomic_store_n(&calls->frames[0], frame, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->returns[0], return_address, __ATOMIC_RELAXED);
    __atomic_store_n(&calls->running[0], object, __ATOMIC_RELEASE);
    /* The store must be ordered before the caller's next load (of the retired flag, or of the plan
       cell): membarrier does that from the remover's side; the compiler must not reorder either. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* cffi_enter's common path alone: marks `object` as running when the thread has no call in progress
   (the outermost call, the common one) and returns the thread's record, for cffi_leave_fast; returns
   NULL, having done nothing, otherwise. An entry that is given NULL makes the whole call, cffi_enter to
   cffi_leave, in a function of its own, and one given the record ends it with cffi_leave_fast: then its
   common path calls nothing that needs the arguments afterwards, nor the result, and keeps one register
   (the record) across the closure's call (see SlotStub.swift). */
static inline __attribute__((always_inline)) cffi_thread_calls *cffi_enter_fast(const void *object) {
    cffi_thread_calls *calls = cffi_unfenced_calls;
    if (__builtin_expect(__atomic_load_n(&calls->running[0], __ATOMIC_RELAXED) != NULL, 0)) return NULL;
    /* The frame read where it is stored, on the common path, which stays in the entry however it is
       compiled (a rare path is what a compiler moves out): unlike cffi_this_frame, it costs nothing on
       every call. The tests of a running call in a release build check it where CI builds. */
    cffi_record_outermost(calls, object, (uintptr_t)__builtin_frame_address(0), (uintptr_t)__builtin_return_address(0));
    return calls;
}

/* Marks `object` as running on this thread, until cffi_leave. A call then checks whether the object was
   retired, with an acquiring load, before it touches anything it holds. Always inlined, so that the
   frame recorded is the entry function's own, which cffi_leave finds again. */
static inline __attribute__((always_inline)) void cffi_enter(const void *object) {
    uintptr_t frame = cffi_this_frame(), return_address = cffi_this_return_address();
    cffi_thread_calls *calls = cffi_unfenced_calls;
    if (__builtin_expect(__atomic_load_n(&calls->running[0], __ATOMIC_RELAXED) != NULL, 0)) {
        /* Nested calls, a thread's first call and calls left by longjmp. */
        cffi_enter_slow(object, frame, return_address);
    } else {
        cffi_record_outermost(calls, object, frame, return_address);
    }
}

/* Ends the thread's outermost call (one cffi_enter_fast entered; cffi_leave ends others through it too);
   `calls` is the thread's record, as cffi_enter_fast returned it (a thread's record stays its own until
   it exits, which a running call never sees). Returns 0
   when it has left; otherwise the caller must call cffi_leave_outermost next, out of line: calls above
   this one that a longjmp left are forgotten there, what a remover deferred is collected, a requested
   exit is taken. As in cffi_leave, the store of NULL comes before the test of the bits. */
static inline __attribute__((always_inline)) int cffi_leave_fast(cffi_thread_calls *calls) {
    __atomic_store_n(&calls->running[0], NULL, __ATOMIC_RELEASE);
    return __builtin_expect(__atomic_load_n(&calls->reclaim, __ATOMIC_RELAXED) != 0, 0);
}
void cffi_leave_outermost(void);

/* Ends the call of the same entry function's cffi_enter; call it from that function's own body (in Swift
   not from a `defer`, which a debug build compiles to a function of its own, with a frame of its own).
   When a closure of the call asked to leave it (CFFI_EXIT_REQUESTED), the exit is taken here, after the
   call has left, and cffi_leave does not return. When a remover deferred what it ran, the thread
   collects it now: the store of NULL comes before the test of the bits, and the remover sets a bit
   before its own membarrier and collection, so one of them always finds the object idle. */
static inline __attribute__((always_inline)) void cffi_leave(void) {
    uintptr_t frame = cffi_this_frame();
    cffi_thread_calls *calls = cffi_current_calls;
    /* Nested calls, and calls above this one that a longjmp left, take the slow path. */
    if (__builtin_expect(__atomic_load_n(&calls->depth, __ATOMIC_RELAXED) > 1, 0)) {
        cffi_leave_slow(frame);
        return;
    }
    /* Any bit: the outermost call has left, so whatever this thread was marked for is collectable. */
    if (__builtin_expect(cffi_leave_fast(calls), 0)) cffi_leave_outermost();
}

/* Notes that a closure asked to leave the call in progress (a request of CallbackExit.h, made just
   before), for its cffi_leave to take the exit; nothing when no call is in progress, whose closure's
   entry takes it itself. The cffi_leave that finds the note clears it and takes the request
   (cffi_exit_take), if one is still there: the C of exits knows nothing of call records. */
void cffi_note_exit_request(void);

/* Called by a remover after it retired objects and before it asks whether any is running: orders every
   thread's earlier records before the scans that follow (a full fence on each running thread). */
void cffi_synchronize_calls(void);

/* Whether any thread, the calling one included, is running `object`. Once `object` is retired (and
   cffi_synchronize_calls was called after), an answer of 0 is final: no call can start it any more.
   Another thread's entry does not count when its frame's return address slot holds another address
   than the entry recorded, or when that thread is blocked in a system call above the entry's frame
   (Linux's /proc/self/task/TID/syscall): either way it left that call by longjmp. */
int cffi_is_running(const void *object);
/* Whether the calling thread is running `object`. */
int cffi_is_running_here(const void *object);
/* Whether any thread has a call in progress at all, one a longjmp left included. When none has, no
   object is running: cffi_is_running answers 0 for every object, from the same loads. */
int cffi_any_call_in_progress(void);
/* Marks every record entry that runs `object` (and every record with unlisted calls) for collection
   when that call leaves. Only with the reclaimer's lock held. */
void cffi_mark_runners(const void *object);
/* Forgets the calling thread's calls that a longjmp left, judged from `frame` (see
   cffi_thread_calls.frames). Collects when one of them was marked. */
void cffi_forget_calls_left_below(uintptr_t frame);

/* cffi_forget_calls_left_below from the frame of the function this is inlined into: DelegateKit's public
   methods that change or wait call it first, from the shallowest frame of theirs, which lies at or above
   any call that a setjmp site called from the same place left. */
static inline __attribute__((always_inline)) void cffi_forget_abandoned_calls(void) {
    uintptr_t frame = cffi_this_frame();
    cffi_thread_calls *calls = cffi_current_calls;
    if (calls != NULL && __atomic_load_n(&calls->running[0], __ATOMIC_RELAXED) != NULL) {
        cffi_forget_calls_left_below(frame);
    }
}

/* What a thread calls to collect deferred objects (DelegateKit's reclaimer), once set. */
void cffi_set_collector(void (*collector)(void));

/* The reclaimer's lock and condition: a pthread mutex the fork handlers take, so a child never finds it
   held by a thread it does not have. cffi_reclaim_wait waits until woken or until `deadline` on
   CLOCK_MONOTONIC; it returns 0, or ETIMEDOUT. Each lock takes the mutex; waiting needs it held. */
void cffi_reclaim_lock(void);
void cffi_reclaim_unlock(void);
int cffi_reclaim_wait(const struct timespec *deadline);
void cffi_reclaim_wake_all(void);

/* DelegateKit's locks are taken inside this gate (shared): fork waits until no thread is inside one, so
   that a child never finds one held by a thread it does not have. Sections inside it never wait for
   other threads, nor run code of the program's. */
void cffi_fork_gate_enter(void);
void cffi_fork_gate_leave(void);

/* How many calls the calling thread has in progress, and forgetting those past `depth`: what a setjmp
   site does when a longjmp lands there (cffi_call_catching_jump, CallbackExit.h), since the calls it
   skipped never leave. What they ran is collected if a remover deferred it. */
long cffi_calls_in_progress_here(void);
void cffi_forget_calls_from(long depth);

#endif
