import CFFIShim
import Glibc

// How a change of a slot reaches C without a lock on the call path, and how what it replaced is let go.
//
// 1. Publish (`republish`, under the delegate's lock): build the slot's new `SlotPlan`, store it in
//    the slot's `PlanCell`, then store the cheapest function that serves the slot into the table with
//    one atomic store. A call sees the old state or the new one, never a mix.
// 2. Retire (`retire`): what was taken out is marked so that no call starts it any more; a call that
//    already started it recorded so first (`cffi_enter`, a hazard pointer).
// 3. Settle (`settle`, `sweep`, outside the lock): wait until no other thread records a retired object
//    as running, then release it; its stub goes back to the slot for the next implementation.
//
// The C side of the record of calls in progress is `cffi_enter`/`cffi_leave`/`cffi_is_running*` in
// CFFIShim; ARCHITECTURE.md follows one call through all of it.

extension DynamicDelegate {
    /// Builds the slot's plan and points the table slot at the cheapest function that serves it.
    /// Runs under the lock; never allocates executable memory or fails (``ensureDispatcher(_:)`` did).
    func republish(_ index: Int, _ state: inout State) {
        let method = descriptor.methods[index]
        // Mutated in place: a copy that is then changed would duplicate the arrays on every change.
        if state.slots[index].entries.contains(where: \.isSpent) { state.slots[index].entries.removeAll { $0.isSpent } }
        let slot = state.slots[index]
        let route = forwardRoute(index, state)
        let top = slot.entries.last
        let responds = top != nil || slot.original != nil || route?.responds == true

        let target: UnsafeRawPointer?
        if slot.policy == .stable || (!slot.observers.isEmpty && responds) {
            target = slot.dispatcher?.address
        } else if let top {
            target = top.directAddress ?? slot.dispatcher?.address
        } else if let original = slot.original {
            target = original
        } else if route?.responds == true {
            target = slot.dispatcher?.address
        } else {
            target = nil
        }

        if let cell = slot.cell, let prepared = try? PreparedSignature.prepared(method.signature) {
            let plan = SlotPlan(
                owner: self, slot: index, methodName: method.name, prepared: prepared,
                levels: slot.entries.reversed(),
                before: slot.observers.filter { $0.timing == .before },
                after: slot.observers.filter { $0.timing == .after },
                original: slot.original, forward: route?.route)
            // The plan first: a dispatcher reached through the new pointer must find it. Sequentially
            // consistent, against the check a dispatched call makes after recording the plan it loaded.
            cell.plan.store(Unmanaged.passUnretained(plan).toOpaque(), ordering: .sequentiallyConsistent)
            if let old = slot.plan { state.slots[index].unsettled.append(old) }
            state.slots[index].plan = plan
        }
        require(target != nil || !responds || slot.dispatcher != nil,
                     "slot '\(method.name)' needs its dispatcher before publishing")
        // A stub runs its implementation only while the slot holds it, so that a call through a stale
        // pointer reaches what the slot holds now: published before the slot points at it, retired
        // after the slot points elsewhere. (A stub C could enter with the slot pointing back at it while
        // retired would forward to itself forever.)
        let targetStub = top?.stub.flatMap { $0.address == target ? $0 : nil }
        targetStub?.publish()
        let address = (table + method.offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        cffi_store_pointer(address, target)
        for entry in slot.entries {
            if let stub = entry.stub, stub !== targetStub, stub.isPublished { stub.retire() }
        }
    }

    /// Makes the slot's dispatcher (once), so that publishing never has to allocate or fail.
    func ensureDispatcher(_ index: Int) throws {
        guard state.withLock({ $0.slots[index].dispatcher == nil }) else { return }
        let cell = PlanCell()
        let dispatcher = try PlanCell.dispatcher(for: cell, signature: descriptor.methods[index].signature)
        _ = try PreparedSignature.prepared(descriptor.methods[index].signature)
        state.withLock { state in
            guard state.slots[index].dispatcher == nil else { return }  // another thread was first
            state.slots[index].cell = cell
            state.slots[index].dispatcher = dispatcher
        }
    }

    /// Retires implementations taken out of slot `index` (after the slot stopped pointing at them) and
    /// returns everything a call of the slot may still be running, for the caller to wait for once it
    /// has released the lock (a running call may itself be waiting for the lock), then ``settle(_:slot:)``.
    ///
    /// Every retired plan stays on the list until no thread runs it: a call inside an old plan can
    /// still start any implementation that plan holds, so concurrent removers each wait for all. An
    /// implementation without a stub needs no entry of its own: only the plans that hold it can run it.
    func retire(_ removed: [Implementation], slot index: Int, _ state: inout State) -> [any Retirable] {
        for implementation in removed where implementation.stub != nil {
            implementation.retire()
            state.slots[index].unsettled.append(implementation)
        }
        return state.slots[index].unsettled
    }

    /// Waits until no other thread runs any of `running` (retired objects of slot `index`), then
    /// releases them and whatever else no thread runs any more (see ``sweep(_:waitedFor:)``).
    func settle(_ running: [any Retirable], slot index: Int) {
        if !running.isEmpty { waitUntilNotRunning(running) }
        sweep(index, waitedFor: Set(running.map { ObjectIdentifier($0) }))
    }

    /// Releases the retired objects of slot `index` that no call can use any more: a plan, and an
    /// implementation's closure with what it captured; its stub goes back to the slot for reuse.
    ///
    /// A call records what it runs before it checks that it was retired (a stub's guard) or replaced (a
    /// plan), so once a wait saw no other thread running an object, a call that records it afresh finds
    /// it retired and touches nothing it holds (it forwards, or reads the cell again). Objects in
    /// `waitedFor` are therefore released unless this very thread is inside them (a closure that removed
    /// itself); the others only once no thread at all records them. What stays is released by a later
    /// change of the slot, or with the delegate.
    func sweep(_ index: Int, waitedFor waited: Set<ObjectIdentifier> = []) {
        let released: [any Retirable] = state.withLock { state in
            var released: [any Retirable] = []
            guard !state.slots[index].unsettled.isEmpty else { return released }
            // After every retirement of what is scanned (they happened before it was listed).
            cffi_synchronize_calls()
            state.slots[index].unsettled.removeAll { object in
                let identity = object.runningIdentity
                let running = waited.contains(ObjectIdentifier(object))
                    ? cffi_is_running_here(identity) : cffi_is_running(identity)
                guard running == 0 else { return false }
                released.append(object)
                return true
            }
            for case let implementation as Implementation in released {
                if let stub = implementation.releaseStub() { state.slots[index].freeStubs.append(stub) }
            }
            return released
        }
        _ = released  // The last references go here, outside the lock: deinitializers run user code.
    }

    /// A stub for a new plain implementation of slot `index`: an idle one of the slot's, or a new one
    /// made with the implementation's prepared signature (every signature a slot accepts is laid out as
    /// the slot's, so any of them serves every later implementation too).
    func takeStub(_ index: Int, prepared: PreparedSignature) throws -> SlotStub {
        if let stub = state.withLock({ $0.slots[index].freeStubs.popLast() }) { return stub }
        let slot = (table + descriptor.methods[index].offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        return try SlotStub(slot: slot, prepared: prepared)
    }
}

/// A closure or plan that calls may be running: a removal retires it (so no call starts it any more)
/// and then waits until no other thread is running it; once no thread runs it, it is released.
protocol Retirable: AnyObject {
    func retire()
    /// What a running call records (`cffi_enter`).
    var runningIdentity: UnsafeRawPointer { get }
    /// Whether a sweep found it idle and released what it held (its stub may serve another closure since).
    var isReleased: Bool { get }
}

/// Waits until no thread but this one runs any of `objects`, which must already be retired.
///
/// An object another remover released meanwhile is done with: that remover saw it idle after it was
/// retired. Its stub may already serve a new implementation, whose calls record the same guard, so
/// waiting on would wait for calls that have nothing to do with this removal.
func waitUntilNotRunning(_ objects: [any Retirable]) {
    cffi_synchronize_calls()
    for object in objects {
        var spins = 0
        while !object.isReleased, cffi_is_running_elsewhere(object.runningIdentity) != 0 {
            spins += 1
            if spins > 64 { sched_yield() }
        }
    }
}
