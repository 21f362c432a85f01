import Synchronization

/// Every delegate that has a forwarding target, by table address: what lets a loop through a raw table
/// pointer be seen, and the lock that makes chain changes one at a time.
let forwardingDelegates = Locked<[UInt: WeakDelegate]>([:])

/// Where a ``DynamicDelegate`` sends the calls of slots it does not implement (A2DynamicDelegate's
/// `realDelegate`, a responder chain).
public enum ForwardingTarget: @unchecked Sendable {  // The raw table's memory is the caller's to keep valid.
    /// Another delegate, followed as it changes.
    case delegate(DynamicDelegate)
    /// A C table laid out as the descriptor says; its slots are read at each call.
    case table(UnsafeRawPointer, ProtocolDescriptor)

    var descriptor: ProtocolDescriptor {
        switch self {
        case .delegate(let delegate): return delegate.descriptor
        case .table(_, let descriptor): return descriptor
        }
    }
}

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
        let (previous, dependents) = try forwardingDelegates.withLock { forwarding in
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
                return (previous, state.dependents)
            }
        }
        if case .delegate(let old) = previous { old.removeDependent(self) }
        if case .delegate(let new) = target { new.addDependent(self) }
        // Published once the new target knows us, so a change it makes meanwhile is not missed.
        state.withLock { state in
            for index in descriptor.methods.indices { republish(index, &state) }
        }
        for index in descriptor.methods.indices { sweep(index) }
        for method in descriptor.methods { notify(dependents, method.name) }
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
            let further = delegate.state.withLock { state in
                delegate.republish(index, &state)
                return state.dependents
            }
            delegate.sweep(index)
            delegate.notify(further, method)
        }
    }
}
