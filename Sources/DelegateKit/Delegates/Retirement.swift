import CDelegateKit
import Glibc
import Synchronization

// How a change of a slot lets go of what it removed, without ever waiting for another thread.
//
// 1. Publish (`republish`, DynamicDelegate+Publishing.swift, under the delegate's lock): the slot's new
//    plan goes into its cell, then the cheapest function serving the slot into the table, each with one
//    atomic store. A call sees the old state or the new one, never a mix.
// 2. Retire (`retire`, under the lock): what the slot stopped using is marked so that no call starts it
//    any more. A stub's guard is retired (a late call forwards to what the slot holds now); a replaced
//    plan is retired by being replaced in its cell; a removed implementation is marked removed in every
//    plan that still holds it, so that an override's `next` skips it. Each goes on the slot's `retiring`.
// 3. Settle (`settle`): one membarrier makes every thread's record of its calls visible (CDelegateKit's
//    Retirement.c: a call records what it runs, then checks it was not retired; one of the two sides
//    always sees the other). What no record holds is released at once: the user's closure and captures,
//    and its stub goes back to the slot for the next implementation. What a record holds is deferred to
//    the `Reclaimer`, which marks the records' entries.
// 4. Reclaim: the call that runs a deferred object tests one bit when it leaves (`cffi_leave`), and if set,
//    collects: whatever no record holds any more is released on that thread, as the call returns. Every
//    later change collects too. Nothing waits; a call that never returns delays only its own objects.
// 5. Wait (`waitForRemovedCalls`): for programs that must know no call still runs what they removed. It
//    sleeps on the reclaimer's condition, which every collection that releases something signals.
//
// Calls that never return. A longjmp out of a call leaves its entry in the thread's record. The thread
// forgets it when it lands in `CFunction.call(catchingJumpsTo:)`, or when it judges the entry gone
// (Retirement.c): a later entry, or a public change or wait (`cffi_forget_abandoned_calls` in their first
// frame), at or above the entry's frame, or the entry's return address slot overwritten; and any thread
// judges another thread's entry gone while that thread is blocked in the kernel above it. A thread that
// exits or is cancelled inside a call clears its record as it exits; a forked child clears the records of
// the threads it does not have. Until then, what the entry ran stays deferred, and nothing else waits.

/// A closure or plan that calls may be running: retired by a change, then released once no call runs it.
protocol Retirable: AnyObject {
    /// What a running call records (`cffi_enter`).
    var runningIdentity: UnsafeRawPointer { get }
}

extension DynamicDelegate {
    /// Retires implementations taken out of slot `index` (after the slot stopped pointing at them): their
    /// stubs stop running them, and every plan still holding one skips it from now on, so no call starts
    /// them again. Plans replaced by ``republish(_:_:)`` are retiring already. ``settle(_:)`` follows,
    /// outside the lock.
    ///
    /// An implementation without a stub needs no entry of its own: only the plans that hold it can run it.
    func retire(_ removed: [Implementation], slot index: Int, _ state: inout State) {
        guard !removed.isEmpty else { return }
        for implementation in removed {
            implementation.retire()
            if implementation.stub != nil { state.slots[index].retiring.append(implementation) }
        }
        for case let plan as SlotPlan in state.slots[index].retiring + state.slots[index].deferred {
            plan.skip(removed)
        }
    }

    /// Releases what slot `index` retired and no call runs, and defers the rest to the ``Reclaimer``.
    /// Returns at once, whatever other threads do.
    func settle(_ index: Int) {
        // This thread's own calls that a longjmp left run nothing: forgotten before the scan (public
        // methods did so already, from a shallower frame, which sees more of them).
        cffi_forget_abandoned_calls()
        let released: [any Retirable] = state.withLock { state in
            guard !state.slots[index].retiring.isEmpty else { return [] }
            // After every retirement of what is scanned (they happened before it was listed).
            cffi_synchronize_calls()
            var released: [any Retirable] = []
            var running: [any Retirable] = []
            for object in state.slots[index].retiring {
                if cffi_is_running(object.runningIdentity) == 0 { released.append(object) } else { running.append(object) }
            }
            state.slots[index].retiring = []
            for case let implementation as Implementation in released {
                if let stub = implementation.releaseStub() { state.slots[index].freeStubs.append(stub) }
            }
            if !running.isEmpty {
                // Still listed here, so that a later removal marks these plans too (see `retire`).
                state.slots[index].deferred += running
                Reclaimer.shared.takeOver(running, from: self, slot: index)
            }
            return released
        }
        Reclaimer.shared.collectIfPending()
        _ = released  // The last references go here, outside the lock: deinitializers run user code.
    }

    /// The reclaimer found `object`, deferred from slot `index`, idle: it leaves the slot's books, and
    /// its stub goes back to the slot. The caller drops the last reference, outside the lock.
    func reclaimed(_ object: any Retirable, slot index: Int) {
        state.withLock { state in
            state.slots[index].deferred.removeAll { $0 === object }
            if let implementation = object as? Implementation, let stub = implementation.releaseStub() {
                state.slots[index].freeStubs.append(stub)
            }
        }
    }

    /// Hands what calls still run to the reclaimer when the delegate goes away (a closure that drops the
    /// last reference to its own delegate, say), so that nothing is freed under a running call.
    func deferRunningObjects(of state: State) {
        var running: [any Retirable] = []
        for slot in state.slots {
            var objects: [any Retirable] = slot.retiring + slot.entries.filter { $0.stub != nil }
            if let plan = slot.plan { objects.append(plan) }
            running += objects.filter { cffi_is_running($0.runningIdentity) != 0 }
            // Deferred ones are the reclaimer's already: it holds them too.
        }
        guard !running.isEmpty else { return }
        Reclaimer.shared.takeOver(running, from: nil, slot: 0)
        Reclaimer.shared.collect()
    }

    /// Waits until no call runs anything removed from this delegate before the wait began: implementations
    /// removed or replaced, layers, observers cancelled, plans replaced by any change. Use it when what a
    /// removed closure used (a buffer, a file, a lock) is about to be freed.
    ///
    /// A removal never waits: once it returns, no call made afterwards runs what it removed, but a call
    /// made before may still be running it on another thread. This waits for those calls, sleeping (no
    /// spinning) until the last of them returns, or until `timeout` has passed.
    ///
    /// - Important: Waiting for a call that is itself waiting for the waiting thread deadlocks until the
    ///   timeout: a closure blocked on a lock the waiter holds, on a semaphore the waiter signals only
    ///   afterwards, or in `DispatchQueue.main.sync` while the main thread waits here. A call that left by
    ///   `longjmp` to a `setjmp` site of your own counts as running until its thread calls into DelegateKit
    ///   again, blocks in the kernel, or exits; one that jumped to
    ///   ``CFunction/call(catchingJumpsTo:_:returning:)->JumpOutcome<R>`` does not.
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: `true` when no such call runs any more; `false` when the timeout passed first.
    /// - Throws: ``DelegateError/waitingForOwnCall(method:protocol:)`` when the calling thread is itself
    ///   inside such a call (a closure waiting for its own removal): that wait could never end.
    @discardableResult
    public func waitForRemovedCalls(timeout: Duration) throws(DelegateError) -> Bool {
        cffi_forget_abandoned_calls()  // calls this thread left by longjmp, judged from the caller's depth
        return try Reclaimer.shared.wait(for: self, timeout: timeout)
    }
}

/// Retired objects that a call was still running when their change settled, until no call runs them.
///
/// Its state is guarded by the shim's reclaimer lock (a pthread mutex that the fork handlers take, so that
/// a forked child never finds it held), and a condition that every release signals for waiters.
final class Reclaimer: @unchecked Sendable {  // `pending` and `releasing` are only touched under cffi_reclaim_lock.
    static let shared = Reclaimer()

    private struct Pending {
        let object: any Retirable
        /// Nil once the delegate is gone (it handed the object over in its deinitializer).
        weak var delegate: DynamicDelegate?
        let slot: Int
    }

    private var pending: [Pending] = []
    /// Objects found idle whose release is still under way, so that a waiter does not return before.
    private var releasing = 0
    /// `pending.count`, readable without the lock, so that a change with nothing pending pays nothing.
    private let count = Atomic<Int>(0)

    private init() {
        // Threads whose marked calls leave, exit or jump back collect through this.
        cffi_set_collector { Reclaimer.shared.collect() }
    }

    /// Takes over `objects`, which calls were running at the change's scan, and marks the records running
    /// them, then synchronizes: the caller collects afterwards, so that a call that left between the scan
    /// and the marking (and so did not see its mark) is not missed.
    func takeOver(_ objects: [any Retirable], from delegate: DynamicDelegate?, slot: Int) {
        cffi_reclaim_lock()
        for object in objects {
            pending.append(Pending(object: object, delegate: delegate, slot: slot))
            cffi_mark_runners(object.runningIdentity)
        }
        count.store(pending.count, ordering: .relaxed)
        cffi_reclaim_unlock()
        cffi_synchronize_calls()
    }

    func collectIfPending() {
        if count.load(ordering: .relaxed) > 0 { collect() }
    }

    /// Releases every deferred object that no call runs any more; on any thread, from any call's leaving.
    func collect() {
        cffi_reclaim_lock()
        var idle: [Pending] = []
        pending.removeAll { item in
            guard cffi_is_running(item.object.runningIdentity) == 0 else { return false }
            idle.append(item)
            return true
        }
        count.store(pending.count, ordering: .relaxed)
        releasing += idle.count
        cffi_reclaim_unlock()
        guard !idle.isEmpty else { return }
        let released = idle.count
        for item in idle { item.delegate?.reclaimed(item.object, slot: item.slot) }
        idle = []  // The last references: deinitializers run here, with no lock held.
        cffi_reclaim_lock()
        releasing -= released
        cffi_reclaim_wake_all()
        cffi_reclaim_unlock()
    }

    /// Sleeps on the reclaimer's condition, which each release signals. A thread that left a call by
    /// longjmp and then blocks in the kernel signals nothing, yet makes that call collectable (see
    /// `cffi_is_running`), so the wait also collects itself when it wakes, after sleeps that double from
    /// 10 ms up to a second.
    func wait(for delegate: DynamicDelegate, timeout: Duration) throws(DelegateError) -> Bool {
        collectIfPending()
        let deadline = Self.deadline(after: timeout)
        cffi_reclaim_lock()
        let awaited = Set(pending.filter { $0.delegate === delegate }.map { ObjectIdentifier($0.object) })
        cffi_reclaim_unlock()
        var nap: Duration = .milliseconds(10)
        var timedOut = false
        while true {
            cffi_reclaim_lock()
            let left = pending.filter { awaited.contains(ObjectIdentifier($0.object)) }
            if let mine = left.first(where: { cffi_is_running_here($0.object.runningIdentity) != 0 }) {
                cffi_reclaim_unlock()
                throw .waitingForOwnCall(method: delegate.descriptor.methods[mine.slot].name, protocol: delegate.descriptor.name)
            }
            let settled = left.isEmpty && releasing == 0
            if settled || timedOut {
                cffi_reclaim_unlock()
                return settled
            }
            var wake = Self.deadline(after: nap)
            let last = Self.isBefore(deadline, wake)
            if last { wake = deadline }
            timedOut = cffi_reclaim_wait(&wake) == ETIMEDOUT && last
            cffi_reclaim_unlock()
            collect()
            nap = min(nap * 2, .seconds(1))
        }
    }

    private static func isBefore(_ a: timespec, _ b: timespec) -> Bool {
        a.tv_sec < b.tv_sec || a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec
    }

    /// `timeout` from now on CLOCK_MONOTONIC, the clock the reclaimer's condition waits on.
    private static func deadline(after timeout: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = max(timeout, .zero).components
        var nanoseconds = Int64(now.tv_nsec) + attoseconds / 1_000_000_000
        var wholeSeconds = Int64(now.tv_sec) &+ min(seconds, Int64(Int32.max))
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            wholeSeconds += 1
        }
        return timespec(tv_sec: Int(wholeSeconds), tv_nsec: Int(nanoseconds))
    }
}
