extension DynamicDelegate {
    /// The next table down the chain, or nil.
    var forwardingTarget: ForwardingTarget? { slots.forwardingTarget }

    /// Sends the calls of slots this delegate does not implement to `target`, matching methods by name;
    /// `responds(to:)` then reflects the whole chain. Pass nil to end the chain here.
    ///
    /// Throws ``DelegateError/forwardingLoop(_:)`` when the chain would come back to a table already in it
    /// (the infinite recursion BlocksKit users hit), and
    /// ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` when a method of the same name
    /// has another signature there. A failed call changes nothing.
    public func setForwardingTarget(_ target: ForwardingTarget?) throws {
        // Chains change one at a time everywhere, so two threads cannot each close half of a loop.
        let previous = try forwardingTables.withLock { forwarding in
            if let target {
                try slots.checkChain(from: target, forwarding)
                for (index, method) in descriptor.methods.enumerated() {
                    guard let theirs = target.descriptor.method(named: method.name) else { continue }
                    guard method.signature.accepts(theirs.signature) else {
                        throw DelegateError.signatureMismatch(
                            method: method.name, protocol: target.descriptor.name,
                            expected: method.signature, actual: theirs.signature)
                    }
                    try slots.ensureDispatcher(index)
                }
            }
            forwarding[UInt(bitPattern: table)] = target == nil ? nil : WeakSlotTable(slots: slots)
            return slots.state.withLock { state in
                let previous = state.forwarding
                state.forwarding = target
                return previous
            }
        }
        if case .delegate(let old) = previous { old.slots.removeDependent(slots) }
        if case .delegate(let new) = target { new.slots.addDependent(slots) }
        // Published once the new target knows us, so a change it makes meanwhile is not missed. (The
        // target itself was set above, under the chains' lock, where the loop check reads it.)
        slots.change { _, changes in
            for index in descriptor.methods.indices { changes.changed(index) }
        }
    }
}
