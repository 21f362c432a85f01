import CDelegateKitRetirement
import Glibc

/// The C half of retiring what a change removed (`CFFIShim/Retirement/`): the per-thread record
/// of calls in progress, the reclaimer's lock, the slot stub's guard, the publishing store and the fork
/// gate. The protocol that uses it is `Delegates/SlotTable/` (`SlotChange.swift` first).
///
/// The functions that record a call or judge abandoned ones are not here: `cffi_enter_fast`, `cffi_enter`,
/// `cffi_leave` and `cffi_forget_abandoned_calls` read the frame of the function they are inlined into,
/// and a Swift wrapper is not inlined across files in a debug build (not even a `@_transparent` one: a
/// debug build compiles files in separate jobs), so the wrapper's own frame would be recorded and a call
/// judged abandoned while it runs. The protocol's entries and changes call them directly, with
/// `cffi_leave_fast` and `cffi_leave_outermost`, which end what `cffi_enter_fast` began:
/// - `SlotStub.swift`: `cffi_enter_fast`, `cffi_leave_fast`, `cffi_enter`, `cffi_leave`;
/// - `PlanCell.swift`: the same, and `cffi_leave_outermost`;
/// - `OutermostCall.swift`: `cffi_leave_outermost`;
/// - `SlotChange.swift` and `Retirement.swift`: `cffi_forget_abandoned_calls`.
///
/// (`SlotStub.swift` and `PlanCell.swift` also name their register entries as `SlotStub.h` declares them
/// to C.) Those files of `Delegates/SlotTable/` and this one are the only ones of the library that import
/// `CDelegateKitRetirement` (`Scripts/check-layout.py` holds every other file to that).
@usableFromInline
enum RetirementShim {
    // MARK: The record of calls in progress

    /// Orders every thread's earlier records before the scans that follow: a remover calls it after it
    /// retired objects and before it asks whether any is running.
    static func synchronizeCalls() {
        cffi_synchronize_calls()
    }

    /// Whether any thread, this one included, runs `object` (final once `object` is retired and
    /// ``synchronizeCalls()`` ran after).
    static func isRunning(_ object: UnsafeRawPointer) -> Bool {
        cffi_is_running(object) != 0
    }

    /// Whether any thread has a call in progress; when none has, ``isRunning(_:)`` is false for every object.
    static var anyCallInProgress: Bool {
        cffi_any_call_in_progress() != 0
    }

    /// Whether this thread runs `object`.
    static func isRunningHere(_ object: UnsafeRawPointer) -> Bool {
        cffi_is_running_here(object) != 0
    }

    /// Marks every call that runs `object` for collection as it leaves; only under ``lockReclaimer()``.
    static func markRunners(of object: UnsafeRawPointer) {
        cffi_mark_runners(object)
    }

    // MARK: The reclaimer

    /// What a thread calls to collect deferred objects as its call leaves.
    static func setCollector(_ collector: @escaping @convention(c) () -> Void) {
        cffi_set_collector(collector)
    }

    /// The reclaimer's mutex, which the fork handlers take too.
    static func lockReclaimer() { cffi_reclaim_lock() }
    static func unlockReclaimer() { cffi_reclaim_unlock() }

    /// Waits, holding the reclaimer's lock, until woken or until `deadline` on `CLOCK_MONOTONIC`; false
    /// when the deadline passed.
    static func waitForReclaimer(until deadline: timespec) -> Bool {
        var deadline = deadline
        return cffi_reclaim_wait(&deadline) != ETIMEDOUT
    }

    /// Wakes every thread in ``waitForReclaimer(until:)``; under the lock.
    static func wakeReclaimerWaiters() { cffi_reclaim_wake_all() }

    // MARK: The fork gate

    /// Enters the shared side of the gate `fork` waits for: a forked child never finds a lock taken inside
    /// held by a thread it does not have.
    static func enterForkGate() { cffi_fork_gate_enter() }
    static func leaveForkGate() { cffi_fork_gate_leave() }

    // MARK: Publishing

    /// Stores `value` in a slot C reads concurrently: one store that never tears, releasing what was
    /// written before.
    @_transparent
    static func store(_ value: UnsafeRawPointer?, in slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        cffi_store_pointer(slot, value)
    }

    /// Loads a slot C may be storing to (acquiring).
    @_transparent
    static func load(_ slot: UnsafePointer<UnsafeMutableRawPointer?>) -> UnsafeRawPointer? {
        cffi_load_pointer(slot)
    }

    // MARK: The slot stub's guard

    /// A slot stub's guard: its closure's handler and user data, the slot, and whether it is retired.
    typealias Guard = cffi_guard

    /// A retired guard of `slot` with no handler yet.
    static func retiredGuard(of slot: UnsafePointer<UnsafeMutableRawPointer?>) -> Guard {
        cffi_guard(retired: 1, handler: nil, user_data: nil, slot: slot, registers: (nil, nil))
    }

    /// The libffi handler of a guarded closure, whose user data is its ``Guard``.
    static var guardedEntry: LibffiShim.Handler { cffi_guarded_entry }

    /// Whether calls run the guard's handler (an acquiring load).
    @_transparent
    static func isPublished(_ guardian: UnsafePointer<Guard>) -> Bool {
        cffi_guard_is_published(guardian) != 0
    }

    /// Lets calls run the guard's handler (sequentially consistent, against ``enter(_:)``).
    static func publish(_ guardian: UnsafeMutablePointer<Guard>) { cffi_guard_publish(guardian) }

    /// Sends later calls on to what the slot holds.
    static func retire(_ guardian: UnsafeMutablePointer<Guard>) { cffi_guard_retire(guardian) }

    // MARK: Leaving a callback

    /// Notes on this thread's call in progress, if any, that a closure of it asked to leave it (a request
    /// of ``CallbackExitShim`` just made): the call's `cffi_leave` takes the exit.
    static func noteExitRequest() {
        cffi_note_exit_request()
    }

    // MARK: Jumping back

    /// How many calls this thread has in progress: what a `setjmp` site records before its call.
    static var callsInProgressHere: Int {
        cffi_calls_in_progress_here()
    }

    /// Forgets this thread's calls past `depth`, which a `longjmp` back to a `setjmp` site skipped.
    static func forgetCalls(from depth: Int) {
        cffi_forget_calls_from(depth)
    }
}
