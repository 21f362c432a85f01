extension DynamicDelegate {
    /// The next table down the chain, or nil.
    public var forwardingTarget: ForwardingTarget? { state.withLock { $0.forwarding } }

    /// Sends the calls of slots this delegate does not implement to `target`, matching methods by name;
    /// `responds(to:)` then reflects the whole chain. Pass nil to end the chain here.
    ///
    /// Throws ``DelegateError/forwardingLoop(_:)`` when the chain would come back to a table already in it
    /// (the infinite recursion BlocksKit users hit), and
    /// ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` when a method of the same name
    /// has another signature there. A failed call changes nothing.
    public func setForwardingTarget(_ target: ForwardingTarget?) throws {
        // Chains change one at a time everywhere, so two threads cannot each close half of a loop.
        let previous = try forwardingDelegates.withLock { forwarding in
            if let target {
                try checkChain(from: target, forwarding)
                for (index, method) in descriptor.methods.enumerated() {
                    guard let theirs = target.descriptor.method(named: method.name) else { continue }
                    guard method.signature.accepts(theirs.signature) else {
                        throw DelegateError.signatureMismatch(
                            method: method.name, protocol: target.descriptor.name,
                            expected: method.signature, actual: theirs.signature)
                    }
                    try ensureDispatcher(index)
                }
            }
            forwarding[UInt(bitPattern: table)] = target == nil ? nil : WeakDelegate(delegate: self)
            return state.withLock { state in
                let previous = state.forwarding
                state.forwarding = target
                return previous
            }
        }
        if case .delegate(let old) = previous { old.removeDependent(self) }
        if case .delegate(let new) = target { new.addDependent(self) }
        // Published once the new target knows us, so a change it makes meanwhile is not missed. (The
        // target itself was set above, under the chains' lock, where the loop check reads it.)
        change { _, changes in
            for index in descriptor.methods.indices { changes.changed(index) }
        }
    }

    /// Walks the chain from `target`, refusing any table seen before, this delegate's included. A raw
    /// table that belongs to a forwarding delegate is followed through that delegate.
    private func checkChain(from target: ForwardingTarget, _ forwarding: [UInt: WeakDelegate]) throws {
        var seen: [(table: UnsafeRawPointer, name: String)] = [(UnsafeRawPointer(table), descriptor.name)]
        var next: ForwardingTarget? = target
        while let current = next {
            let (table, name): (UnsafeRawPointer, String)
            switch current {
            case .delegate(let delegate):
                (table, name) = (UnsafeRawPointer(delegate.table), delegate.descriptor.name)
                next = delegate.forwardingTarget
            case .table(let pointer, let descriptor):
                (table, name) = (pointer, descriptor.name)
                next = forwarding[UInt(bitPattern: pointer)]?.delegate?.forwardingTarget
            }
            if seen.contains(where: { $0.table == table }) {
                throw DelegateError.forwardingLoop(seen.map(\.name) + [name])
            }
            seen.append((table, name))
        }
    }

    /// How slot `index` reaches the forwarding target, and whether the target responds there now.
    func forwardRoute(_ index: Int, _ state: State) -> (route: ForwardRoute, responds: Bool)? {
        guard let forwarding = state.forwarding,
            let theirs = forwarding.descriptor.method(named: descriptor.methods[index].name)
        else { return nil }
        switch forwarding {
        case .delegate(let target):
            let route = ForwardRoute(slotAddress: UnsafeRawPointer(target.table + theirs.offset), keepAlive: target)
            return (route, target.responds(to: theirs.name))
        case .table(let pointer, _):
            let route = ForwardRoute(slotAddress: pointer + theirs.offset, keepAlive: nil)
            return (route, route.function != nil)
        }
    }

    func addDependent(_ dependent: DynamicDelegate) {
        state.withLock { $0.dependents.append(WeakDelegate(delegate: dependent)) }
    }

    func removeDependent(_ dependent: DynamicDelegate) {
        state.withLock { $0.dependents.removeAll { $0.delegate == nil || $0.delegate === dependent } }
    }

    /// Tells the delegates forwarding here that `method` may have started or stopped responding.
    /// Called without holding this delegate's lock: theirs is taken before ours, down the chain.
    func notify(_ dependents: [WeakDelegate], _ method: String) {
        for dependent in dependents {
            guard let delegate = dependent.delegate, let index = try? delegate.descriptor.methodIndex(of: method) else {
                continue
            }
            delegate.change { _, changes in changes.changed(index) }
        }
    }
}

/// A delegate that forwards to another, held weakly so forwarding does not keep it alive.
struct WeakDelegate {
    weak var delegate: DynamicDelegate?
}

/// How a slot reaches its forwarding target: the address of the target table's slot, read at each call
/// so later changes to the target are followed.
struct ForwardRoute: @unchecked Sendable {  // The table it points into is kept alive by `keepAlive`.
    let slotAddress: UnsafeRawPointer
    let keepAlive: AnyObject?

    var function: UnsafeRawPointer? {
        RetirementShim.load(slotAddress.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)).map(UnsafeRawPointer.init)
    }
}
