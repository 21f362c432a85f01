import Glibc

// Step 2 of the protocol (SlotChange.swift): how a change of a slot reaches C without a lock on the call
// path; and what publishing needs made beforehand, outside the lock.

extension SlotTable {
    /// Builds the slot's plan and points the table slot at the cheapest function that serves it.
    /// Runs under the lock; never allocates executable memory or fails (``ensureDispatcher(_:)`` did).
    func republish(_ index: Int, _ state: inout State) {
        // Read in place, never copied: a copy of the stack counted a reference to its bottom entry and
        // its array, and released both, on every change. (Closures, not key paths: a debug build reads a
        // key path through the runtime, about 1,700 instructions a change.)
        if state.slots[index].entries.contains(where: { $0.isSpent }) {
            _ = state.slots[index].entries.remove { $0.isSpent }
        }
        let original = state.slots[index].original
        let dispatcherAddress = state.slots[index].dispatcher?.address
        let route = state.forwarding == nil ? nil : forwardRoute(index, state)
        let top = state.slots[index].entries.top
        let responds = top != nil || original != nil || route?.responds == true

        let target: UnsafeRawPointer?
        if state.slots[index].policy == .stable || (!state.slots[index].observers.isEmpty && responds) {
            target = dispatcherAddress
        } else if let top {
            target = top.directAddress ?? dispatcherAddress
        } else if let original {
            target = original
        } else if route?.responds == true {
            target = dispatcherAddress
        } else {
            target = nil
        }

        // The method's parts read where they are used: a copy of its descriptor counted a reference for
        // its name and each array of its signature on every change.
        if let cell = state.slots[index].cell, let prepared = try? PreparedSignature.prepared(descriptor.methods[index].signature) {
            let observers = state.slots[index].observers
            let plan = SlotPlan(
                owner: self, slot: index, methodName: descriptor.methods[index].name, prepared: prepared,
                levels: state.slots[index].entries.reversed(),
                before: observers.filter { $0.timing == .before },
                after: observers.filter { $0.timing == .after },
                original: original, forward: route?.route)
            // The plan first: a dispatcher reached through the new pointer must find it. Sequentially
            // consistent, against the check a dispatched call makes after recording the plan it loaded.
            cell.plan.store(Unmanaged.passUnretained(plan).toOpaque(), ordering: .sequentiallyConsistent)
            if let old = state.slots[index].plan { state.slots[index].retiring.append(old) }
            state.slots[index].plan = plan
        }
        require(target != nil || !responds || dispatcherAddress != nil,
                     "slot '\(descriptor.methods[index].name)' needs its dispatcher before publishing")
        // A stub runs its implementation only while the slot holds it, so that a call through a stale
        // pointer reaches what the slot holds now: published before the slot points at it, retired
        // after the slot points elsewhere. (A stub C could enter with the slot pointing back at it while
        // retired would forward to itself forever.)
        let targetStub = top?.stub.flatMap { $0.address == target ? $0 : nil }
        targetStub?.publish()
        let address = (table + descriptor.methods[index].offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        RetirementShim.store(target, in: address)
        state.slots[index].entries.forEach { entry in
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

    /// A stub for a new plain implementation of slot `index`: an idle one of the slot's, or a new one
    /// made with the implementation's prepared signature (every signature a slot accepts is laid out as
    /// the slot's, so any of them serves every later implementation too).
    func takeStub(_ index: Int, prepared: PreparedSignature) throws -> SlotStub {
        // Checked by reading first: taking one writes the slot's rare parts, which a slot that never
        // freed a stub does not have.
        if freeStubCount.load(ordering: .relaxed) > 0, let stub = state.withLock({ state -> SlotStub? in
            guard !state.slots[index].freeStubs.isEmpty else { return nil }
            freeStubCount.subtract(1, ordering: .relaxed)
            return state.slots[index].freeStubs.removeLast()
        }) {
            return stub
        }
        let slot = (table + descriptor.methods[index].offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        return try SlotStub.make(slot: slot, prepared: prepared)
    }

    /// Gives slot `index` back `stub`, retired and idle, for its next plain implementation. Under the lock.
    func freeStub(_ stub: SlotStub, of index: Int, _ state: inout State) {
        state.slots[index].freeStubs.append(stub)
        freeStubCount.add(1, ordering: .relaxed)
    }
}
