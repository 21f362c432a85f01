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
    /// them again. Plans replaced by ``republish(_:_:)`` are retiring already. ``settle(_:_:)`` follows,
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

    /// Releases what slot `index` retired and no call runs, of `listed` (its `retiring` as the change's
    /// section of the lock left it), and defers the rest to the ``Reclaimer`` (whose collection
    /// ``applyChange(_:)`` runs next). Returns at once, whatever other threads do.
    ///
    /// The membarrier runs outside the lock: it waits for every CPU that runs a thread of the process
    /// (about 15 µs where C threads call, milliseconds at worst on a loaded machine), and a lock held
    /// that long let one thread changing a delegate keep another from it for the whole of a stress run.
    /// What is judged stays on `retiring` meanwhile, so that a removal in between still marks its plans
    /// (see `retire`); another change's settle of the slot may judge some of it first.
    func settle(_ index: Int, _ listed: [any Retirable]) {
        // After the retirement of everything listed (each happened before it was listed).
        RetirementShim.synchronizeCalls()
        let (released, running): ([any Retirable], [any Retirable]) = state.withLock { state in
            var released: [any Retirable] = []
            var running: [any Retirable] = []
            var kept: [any Retirable] = []  // what changes since retired, for their own settles
            for object in state.slots[index].retiring {
                if !listed.contains(where: { $0 === object }) {
                    kept.append(object)
                } else if RetirementShim.isRunning(object.runningIdentity) {
                    running.append(object)
                } else {
                    released.append(object)
                }
            }
            state.slots[index].retiring = kept
            for case let implementation as Implementation in released {
                if let stub = implementation.releaseStub() { freeStub(stub, of: index, &state) }
            }
            // Still listed here, so that a later removal marks these plans too (see `retire`).
            if !running.isEmpty { state.slots[index].deferred += running }
            return (released, running)
        }
        // Outside the lock too (it synchronizes again). A collection that finds one idle before it is
        // handed over cannot happen: the reclaimer only collects what it holds.
        if !running.isEmpty { Reclaimer.shared.takeOver(running, from: self, slot: index) }
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
