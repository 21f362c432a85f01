extension SlotTable {
    /// What this table forwards to.
    var forwardingTarget: ForwardingTarget? { state.withLock { $0.forwarding } }

    /// Walks the chain from `target`, refusing any table seen before, this delegate's included. A raw
    /// table that belongs to a forwarding delegate is followed through that delegate.
    func checkChain(from target: ForwardingTarget, _ forwarding: [UInt: WeakSlotTable]) throws {
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
                next = forwarding[UInt(bitPattern: pointer)]?.slots?.forwardingTarget
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

    func addDependent(_ dependent: SlotTable) {
        state.withLock { $0.dependents.append(WeakSlotTable(slots: dependent)) }
    }

    func removeDependent(_ dependent: SlotTable) {
        state.withLock { $0.dependents.removeAll { $0.slots == nil || $0.slots === dependent } }
    }

    /// Tells the delegates forwarding here that `method` may have started or stopped responding.
    /// Called without holding this delegate's lock: theirs is taken before ours, down the chain.
    func notify(_ dependents: [WeakSlotTable], _ method: String) {
        for dependent in dependents {
            guard let dependent = dependent.slots, let index = try? dependent.descriptor.methodIndex(of: method) else {
                continue
            }
            dependent.change { _, changes in changes.changed(index) }
        }
    }
}

/// The slots of a delegate that forwards to another, held weakly so forwarding does not keep them alive.
struct WeakSlotTable {
    weak var slots: SlotTable?
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
