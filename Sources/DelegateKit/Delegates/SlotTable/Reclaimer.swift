import Glibc
import Synchronization

// Step 4 of the protocol (SlotChange.swift): what a change could not release at once, until no call runs it.

/// Retired objects that a call was still running when their change settled, until no call runs them.
///
/// Its state is guarded by the shim's reclaimer lock (a pthread mutex that the fork handlers take, so that
/// a forked child never finds it held), and a condition that every release signals for waiters.
final class Reclaimer: @unchecked Sendable {  // `pending` and `releasing` are only touched under cffi_reclaim_lock.
    static let shared = Reclaimer()

    private struct Pending {
        let object: any Retirable
        /// Nil once the delegate is gone (it handed the object over in its deinitializer).
        weak var delegate: SlotTable?
        let slot: Int
    }

    private var pending: [Pending] = []
    /// Objects found idle whose release is still under way, so that a waiter does not return before.
    private var releasing = 0
    /// `pending.count`, readable without the lock, so that a change with nothing pending pays nothing.
    private let count = Atomic<Int>(0)

    private init() {
        // Threads whose marked calls leave, exit or jump back collect through this.
        RetirementShim.setCollector { Reclaimer.shared.collect() }
    }

    /// Takes over `objects`, which calls were running at the change's scan, and marks the records running
    /// them, then synchronizes: the caller collects afterwards, so that a call that left between the scan
    /// and the marking (and so did not see its mark) is not missed.
    func takeOver(_ objects: [any Retirable], from delegate: SlotTable?, slot: Int) {
        RetirementShim.lockReclaimer()
        for object in objects {
            pending.append(Pending(object: object, delegate: delegate, slot: slot))
            RetirementShim.markRunners(of: object.runningIdentity)
        }
        count.store(pending.count, ordering: .relaxed)
        RetirementShim.unlockReclaimer()
        RetirementShim.synchronizeCalls()
    }

    func collectIfPending() {
        if count.load(ordering: .relaxed) > 0 { collect() }
    }

    /// Releases every deferred object that no call runs any more; on any thread, from any call's leaving.
    func collect() {
        RetirementShim.lockReclaimer()
        var idle: [Pending] = []
        pending.removeAll { item in
            guard !RetirementShim.isRunning(item.object.runningIdentity) else { return false }
            idle.append(item)
            return true
        }
        count.store(pending.count, ordering: .relaxed)
        releasing += idle.count
        RetirementShim.unlockReclaimer()
        guard !idle.isEmpty else { return }
        let released = idle.count
        for item in idle { item.delegate?.reclaimed(item.object, slot: item.slot) }
        idle = []  // The last references: deinitializers run here, with no lock held.
        RetirementShim.lockReclaimer()
        releasing -= released
        RetirementShim.wakeReclaimerWaiters()
        RetirementShim.unlockReclaimer()
    }

    /// Sleeps on the reclaimer's condition, which each release signals. A thread that left a call by
    /// longjmp and then blocks in the kernel signals nothing, yet makes that call collectable (see
    /// `cffi_is_running`), so the wait also collects itself when it wakes, after sleeps that double from
    /// 10 ms up to a second.
    func wait(for delegate: SlotTable, timeout: Duration) throws(DelegateError) -> Bool {
        collectIfPending()
        let deadline = Self.deadline(after: timeout)
        RetirementShim.lockReclaimer()
        let awaited = Set(pending.filter { $0.delegate === delegate }.map { ObjectIdentifier($0.object) })
        RetirementShim.unlockReclaimer()
        var nap: Duration = .milliseconds(10)
        var timedOut = false
        while true {
            RetirementShim.lockReclaimer()
            let left = pending.filter { awaited.contains(ObjectIdentifier($0.object)) }
            if let mine = left.first(where: { RetirementShim.isRunningHere($0.object.runningIdentity) }) {
                RetirementShim.unlockReclaimer()
                throw .waitingForOwnCall(method: delegate.descriptor.methods[mine.slot].name, protocol: delegate.descriptor.name)
            }
            let settled = left.isEmpty && releasing == 0
            if settled || timedOut {
                RetirementShim.unlockReclaimer()
                return settled
            }
            var wake = Self.deadline(after: nap)
            let last = Self.isBefore(deadline, wake)
            if last { wake = deadline }
            timedOut = !RetirementShim.waitForReclaimer(until: wake) && last
            RetirementShim.unlockReclaimer()
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
