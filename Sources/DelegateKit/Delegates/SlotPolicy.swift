/// How a slot behaves when nothing implements it.
public enum SlotPolicy: Sendable {
    /// The slot is NULL while nothing implements it, so C's "is this callback set?" test sees the truth.
    /// C libraries that copy the table (`fopencookie`) or test each slot once will not see later changes.
    case nullWhenUnimplemented
    /// The slot always holds one function, which dispatches to the current implementation, the chain or
    /// the default value, so changes reach C libraries that copied the table. Costs one dispatch per call.
    case stable
}

extension DynamicDelegate {
    /// Sets how `method`'s slot behaves when nothing implements it, or every slot's when `method` is nil;
    /// see ``SlotPolicy``.
    public func setPolicy(_ policy: SlotPolicy, for method: String? = nil) throws {
        guard let method else {
            for method in descriptor.methods { try setPolicy(policy, for: method.name) }
            return
        }
        let index = try descriptor.methodIndex(of: method)
        if policy == .stable { try slots.ensureDispatcher(index) }
        slots.change { state, changes in
            state.slots[index].policy = policy
            changes.changed(index)
        }
    }
}
