/// When an observer runs relative to the slot's implementation.
public enum ObservationTiming: Sendable {
    /// Before the implementation, seeing the arguments.
    case before
    /// After the implementation, seeing the arguments and the result C receives.
    case after
}

extension DynamicDelegate {
    /// Calls `body` with the arguments of every call of `method`, `.before` or `.after` its
    /// implementation, in registration order with other observers. Observers cannot change the result.
    ///
    /// With an `owner`, the observation ends by itself when the owner is deinitialized (REObserver).
    /// Under the default policy an observer does not make an empty slot respond: calls still go to
    /// what lies below (the original, the forwarding target); use ``SlotPolicy/stable`` to see calls of an
    /// empty slot. Throws like `implement` when the argument types are not the method's.
    @inlinable
    public func observe<each A: CValue>(
        _ method: String, _ timing: ObservationTiming, owner: AnyObject? = nil,
        _ body: @escaping @Sendable (repeat each A) -> Void
    ) throws -> ObservationToken {
        let arguments = try CSignature.of(CVoid.self, repeat (each A).self).argumentTypes
        return try addObserver(method, timing, owner: owner, arguments: arguments, result: nil) { _, _, pointers in
            var cursor = pointers
            body(repeat nextArgument(&cursor) as each A)
        }
    }

    /// Calls `body` after every call of `method` with the result C receives and the arguments.
    @inlinable
    public func observeResult<each A: CValue, R: CValue>(
        _ method: String, owner: AnyObject? = nil, _ body: @escaping @Sendable (R, repeat each A) -> Void
    ) throws -> ObservationToken {
        let signature = try CSignature.of(R.self, repeat (each A).self)
        return try addObserver(method, .after, owner: owner, arguments: signature.argumentTypes, result: signature.returnType) {
            _, result, pointers in
            var cursor = pointers
            body(UnsafeRawPointer(result.unsafelyUnwrapped).loadUnaligned(as: R.self), repeat nextArgument(&cursor) as each A)
        }
    }

    /// Calls `body` for every call of every slot, with the method, the decoded arguments and (after) the
    /// result: for tracing. Does not throw; stops when the token is cancelled or deinitialized.
    public func observeAll(
        _ timing: ObservationTiming = .after, owner: AnyObject? = nil, _ body: @escaping @Sendable (ObservedCall) -> Void
    ) -> ObservationToken {
        let observer = Observer(timing: timing, owner: owner, delegate: slots, registers: nil) { plan, result, arguments in
            body(ObservedCall(method: plan.methodName, signature: plan.prepared.signature, result: result, arguments: arguments))
        }
        for index in descriptor.methods.indices {
            do {
                try slots.ensureDispatcher(index)
            } catch {
                misuse("observeAll could not make a dispatcher for '\(descriptor.methods[index].name)': \(error)")
            }
        }
        slots.change { state, changes in
            for index in descriptor.methods.indices {
                state.slots[index].observers.append(observer)
                changes.changed(index)
            }
        }
        return ObservationToken([observer])
    }

    @usableFromInline
    func addObserver(
        _ method: String, _ timing: ObservationTiming, owner: AnyObject?, arguments: [CType], result: CType?,
        registers: Observer.RegisterBody? = nil, body: @escaping Observer.ArrayBody
    ) throws -> ObservationToken {
        let index = try descriptor.methodIndex(of: method)
        let expected = descriptor.methods[index].signature
        // An observer of a variadic method reads the arguments before `...`.
        try slots.checkSignature(CSignature(result ?? expected.returnType, arguments, isVariadic: expected.isVariadic), of: index)
        try slots.ensureDispatcher(index)
        let observer = Observer(timing: timing, owner: owner, delegate: slots, registers: registers, body: body)
        slots.change { state, changes in
            state.slots[index].observers.append(observer)
            changes.changed(index)
        }
        return ObservationToken([observer])
    }
}
