import CFFIShim
import Glibc
import Synchronization

/// One entry of a slot's stack: a closure and how it is called.
@usableFromInline
final class Implementation: Retirable, @unchecked Sendable {  // Immutable but for the atomic `claimed`.
    /// How the closure runs: on its own, or handed the implementation below it.
    @usableFromInline
    enum Body: Sendable {
        case plain(CallThunk)
        case override(OverrideThunk)
    }

    /// How a call reaches this implementation: as a closure of its own, or as an override.
    enum Callable {
        case plain(PlainClosure)
        case override(OverrideThunk)
    }

    let key: AnyHashable
    let body: Callable
    /// What C enters when the slot holds this implementation directly: plain ones that serve every call.
    /// Bound to this implementation's closure for as long as the implementation is in the slot.
    let stub: SlotStub?
    /// The index of its slot in the delegate's descriptor.
    let slotIndex: Int
    /// The closure with its Swift types, when it was given through a fixed-arity API.
    let typed: TypedEntry?
    /// Runs for exactly one call, then removes itself.
    let once: Bool
    /// Set by the one call a `once` implementation may serve.
    private let claimed = Atomic<Bool>(false)

    /// `stub` must be given for a plain implementation that is not `once`, and only then.
    init(key: AnyHashable, body: Body, once: Bool, typed: TypedEntry?, stub: SlotStub?, index: Int) {
        self.key = key
        slotIndex = index
        self.once = once
        self.typed = typed
        switch body {
        case .plain(let thunk):
            let closure = PlainClosure(thunk)
            self.body = .plain(closure)
            stub?.bind(closure)
        case .override(let thunk):
            self.body = .override(thunk)
        }
        self.stub = stub
    }

    /// The prepared signature for a stub of its own (see ``stub``), or nil when it is called only
    /// through the slot's plans.
    static func stubSignature(_ body: Body, once: Bool) -> FFISignature? {
        guard case .plain(let thunk) = body, !once else { return nil }
        return thunk.prepared
    }

    /// The C function a slot can hold directly: a plain implementation that may serve every call.
    var directAddress: UnsafeRawPointer? { stub?.address }

    /// Whether this call may run the implementation: always, unless it serves one call and that call
    /// has been taken (possibly by another thread at the same moment).
    func claim() -> Bool {
        !once || claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    var isSpent: Bool { once && claimed.load(ordering: .acquiring) }

    /// Stops calls entering through the stub (they go to what the slot holds now).
    func retire() { stub?.retire() }

    /// Set once its stub went back to the slot (see ``DynamicDelegate/sweep(_:)``).
    private let released = Atomic<Bool>(false)

    var isReleased: Bool { released.load(ordering: .acquiring) }

    /// Gives the stub back, idle and unbound, for the slot to reuse.
    func releaseStub() -> SlotStub? {
        stub?.unbind()
        released.store(true, ordering: .releasing)
        return stub
    }

    var runningIdentity: UnsafeRawPointer {
        stub?.runningIdentity ?? UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }
}

/// A closure or plan that calls may be running: a removal retires it (so no call starts it any more)
/// and then waits until no other thread is running it; once no thread runs it, it is released.
protocol Retirable: AnyObject {
    func retire()
    /// What a running call records (`cffi_enter`).
    var runningIdentity: UnsafeRawPointer { get }
    /// Whether a sweep found it idle and released what it held (its stub may serve another closure since).
    var isReleased: Bool { get }
}

/// Waits until no thread but this one runs any of `objects`, which must already be retired.
///
/// An object another remover released meanwhile is done with: that remover saw it idle after it was
/// retired. Its stub may already serve a new implementation, whose calls record the same guard, so
/// waiting on would wait for calls that have nothing to do with this removal.
func waitUntilNotRunning(_ objects: [any Retirable]) {
    cffi_synchronize_calls()
    for object in objects {
        var spins = 0
        while !object.isReleased, cffi_is_running_elsewhere(object.runningIdentity) != 0 {
            spins += 1
            if spins > 64 { sched_yield() }
        }
    }
}

/// A layer's closure with its Swift types, so that a `next` of the same types can call it directly
/// instead of laying the arguments out again for libffi. Generated subclasses (`Plain2<A0, A1, R>`,
/// `Override2<A0, A1, R>`, …) each hold one closure.
@usableFromInline
class TypedEntry {
    /// The closure's Swift function type without `Next` (`(A0, A1) -> R` for a plain layer and an override
    /// alike): two layers of the same one can call each other directly.
    let functionType: ObjectIdentifier

    @usableFromInline init(functionType: Any.Type) { self.functionType = ObjectIdentifier(functionType) }
}

/// An implementation that receives ``Next``, the way to call what lies below it.
@usableFromInline
final class OverrideThunk: Sendable {
    @usableFromInline
    typealias Body = @Sendable (CallContext, UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void

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
    @usableFromInline let body: Body
    /// The override in register form, when its Swift types say where each argument arrives.
    let registers: RegisterBody
    /// Whether ``registers`` is the override's own (else it is never called).
    let hasRegisters: Bool

    @usableFromInline
    init(signature: CSignature, registers: RegisterBody? = nil, body: @escaping Body) {
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

    /// Whether overrides of `signature` can take the register path.
    @usableFromInline
    static func takesRegisters(_ signature: CSignature) -> Bool {
        RegisterPath.isAvailable && RegisterLayout(signature) != nil
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
