// cffi_forget_abandoned_calls judges abandoned calls from the frame it is inlined into, so this file calls
// it itself rather than through RetirementShim (see there).
import CDelegateKitRetirement

// Steps 3 and 4 of the protocol (SlotChange.swift): retiring what a change removed and settling it, and
// the wait for calls still running what was removed.

/// A closure or plan that calls may be running: retired by a change, then released once no call runs it.
protocol Retirable: AnyObject {
    /// What a running call records (`cffi_enter`).
    var runningIdentity: UnsafeRawPointer { get }
}

extension SlotTable {
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

    /// Releases what slot `index` retired and no call runs, and defers the rest to the ``Reclaimer``
    /// (whose collection ``applyChange(_:)`` runs next). Returns at once, whatever other threads do.
    func settle(_ index: Int) {
        let released: [any Retirable] = state.withLock { state in
            guard !state.slots[index].retiring.isEmpty else { return [] }
            // After every retirement of what is scanned (they happened before it was listed).
            RetirementShim.synchronizeCalls()
            var released: [any Retirable] = []
            var running: [any Retirable] = []
            for object in state.slots[index].retiring {
                if !RetirementShim.isRunning(object.runningIdentity) { released.append(object) } else { running.append(object) }
            }
            state.slots[index].retiring = []
            for case let implementation as Implementation in released {
                if let stub = implementation.releaseStub() { freeStub(stub, of: index, &state) }
            }
            if !running.isEmpty {
                // Still listed here, so that a later removal marks these plans too (see `retire`).
                state.slots[index].deferred += running
                Reclaimer.shared.takeOver(running, from: self, slot: index)
            }
            return released
        }
        _ = released  // The last references go here, outside the lock: deinitializers run user code.
    }

    /// The reclaimer found `object`, deferred from slot `index`, idle: it leaves the slot's books, and
    /// its stub goes back to the slot. The caller drops the last reference, outside the lock.
    func reclaimed(_ object: any Retirable, slot index: Int) {
        state.withLock { state in
            state.slots[index].deferred.removeAll { $0 === object }
            if let implementation = object as? Implementation, let stub = implementation.releaseStub() {
                freeStub(stub, of: index, &state)
            }
        }
    }

    /// Hands what calls still run to the reclaimer when the delegate goes away (a closure that drops the
    /// last reference to its own delegate, say), so that nothing is freed under a running call.
    func deferRunningObjects(of state: State) {
        // Asked object by object, with nothing allocated unless a call runs one: a delegate going away
        // is common, one going away under a running call rare, and with no call in progress on any
        // thread not asked at all. Deferred objects are the reclaimer's already: it holds them too.
        guard RetirementShim.anyCallInProgress else { return }
        var running: [any Retirable] = []
        // By index: `for slot in state.slots` copies each slot's state, a reference counted per array.
        for index in state.slots.indices {
            for object in state.slots[index].retiring where RetirementShim.isRunning(object.runningIdentity) { running.append(object) }
            for entry in state.slots[index].entries where entry.stub != nil && RetirementShim.isRunning(entry.runningIdentity) {
                running.append(entry)
            }
            if let plan = state.slots[index].plan, RetirementShim.isRunning(plan.runningIdentity) { running.append(plan) }
        }
        guard !running.isEmpty else { return }
        Reclaimer.shared.takeOver(running, from: nil, slot: 0)
        Reclaimer.shared.collect()
    }

    /// The wait of ``waitForRemovedCalls(timeout:)``. Transparent (in an extension: a class's own methods
    /// cannot be), so that the calls this thread left by `longjmp` are judged from the frame of the public
    /// method that called it, as ``removeImplementation(for:matching:)`` judges them.
    @_transparent
    func waitForCallsOfRemovedObjects(timeout: Duration) throws(DelegateError) -> Bool {
        cffi_forget_abandoned_calls()  // calls this thread left by longjmp, judged from the caller's depth
        return try Reclaimer.shared.wait(for: self, timeout: timeout)
    }
}
