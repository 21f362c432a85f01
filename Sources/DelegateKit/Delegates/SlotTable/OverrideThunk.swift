/// An implementation that receives ``Next``, the way to call what lies below it.
@usableFromInline
final class OverrideThunk: Sendable {
    @usableFromInline
    typealias ArrayBody = @Sendable (CallContext, UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void

    /// An override in register form (see ``RegisterPath``; a struct for the same reason).
    @frozen @usableFromInline
    struct RegisterBody: Sendable {
        @usableFromInline let call: @Sendable (
            CallContext, UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double, Double, Double
        ) -> RegisterResult

        @inlinable
        init(
            _ call: @escaping @Sendable (
                CallContext, UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double, Double,
                Double
            ) -> RegisterResult
        ) {
            self.call = call
        }
    }

    @usableFromInline let signature: CSignature
    @usableFromInline let body: ArrayBody
    /// The override in register form, when its Swift types say where each argument arrives.
    let registers: RegisterBody
    /// Whether ``registers`` is the override's own (else it is never called).
    let hasRegisters: Bool

    @usableFromInline
    init(signature: CSignature, registers: RegisterBody? = nil, body: @escaping ArrayBody) {
        self.signature = signature
        self.registers = registers ?? RegisterBody { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in .zero }
        hasRegisters = registers != nil
        self.body = body
    }

    /// Runs the register form (present whenever the plan runs in register form).
    @inline(__always)
    func call(_ context: CallContext, _ r: ArgumentRegisters) -> RegisterResult {
        registers.call(
            context, r.integers.0, r.integers.1, r.integers.2, r.integers.3, r.integers.4,
            r.sse.0, r.sse.1, r.sse.2, r.sse.3, r.sse.4, r.sse.5, r.sse.6, r.sse.7)
    }

    /// Whether overrides of `signature` can take the register path: what its prepared form says, found
    /// by its key (and published under it the first time), rather than a register layout worked out for
    /// every override made, which cost some 1,700 instructions of each `override` in a release build.
    @usableFromInline
    static func takesRegisters(_ signature: CSignature) -> Bool {
        guard RegisterPath.isAvailable else { return false }
        if !signature.isVariadic, let key = PreparedSignature.key(of: signature),
           let prepared = try? PreparedSignature.prepared(key: key, { signature }) {
            return prepared.takesRegisters
        }
        return RegisterLayout(signature) != nil
    }

    /// The thunk for an override whose arguments come after its ``Next``. Specialized in the caller's
    /// module like `CallThunk.typed(_:)`.
    @inlinable
    static func typed<each A: CValue, R: CValue>(
        _ closure: @escaping @Sendable (Next<repeat each A, R>, repeat each A) -> R
    ) throws -> OverrideThunk {
        let signature = try CSignature.of(R.self, repeat (each A).self)
        let widening = signature.returnType.widening
        return OverrideThunk(signature: signature) { context, result, arguments in
            var cursor = arguments
            let next = Next<repeat each A, R>(context, forwardAnyArity)
            storeResult(closure(next, repeat nextArgument(&cursor) as each A), to: result, widening)
        }
    }

    /// The thunk for an override of a method returning `void`.
    @inlinable
    static func typed<each A: CValue>(
        _ closure: @escaping @Sendable (Next<repeat each A, Void>, repeat each A) -> Void
    ) throws -> OverrideThunk {
        let signature = try CSignature.of(CVoid.self, repeat (each A).self)
        return OverrideThunk(signature: signature) { context, _, arguments in
            var cursor = arguments
            closure(Next<repeat each A, Void>(context, forwardAnyArity), repeat nextArgument(&cursor) as each A)
        }
    }
}
