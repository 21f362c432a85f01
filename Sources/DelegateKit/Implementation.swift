import CFFIShim
import Synchronization

/// One entry of a slot's stack: a closure and how it is called.
@usableFromInline
final class Implementation: @unchecked Sendable {  // Immutable but for the atomic `claimed`.
    /// How the closure runs: on its own, or handed the implementation below it.
    @usableFromInline
    enum Body: Sendable {
        case plain(CallThunk)
        case override(OverrideThunk)
    }

    /// How a call reaches this implementation: as a C closure of its own, or as an override.
    enum Callable {
        case plain(CClosure)
        case override(OverrideThunk)
    }

    let key: AnyHashable
    let body: Callable
    /// What C enters when the slot holds this implementation's closure directly (plain ones only).
    let direct: DirectCall?
    /// The index of its slot in the delegate's descriptor.
    let slotIndex: Int
    /// The closure with its Swift types, when it was given through a fixed-arity API.
    let typed: TypedEntry?
    /// Runs for exactly one call, then removes itself.
    let once: Bool
    /// Set by the one call a `once` implementation may serve.
    private let claimed = Atomic<Bool>(false)

    /// `slot` is where the implementation's table holds it: a call that arrives after the
    /// implementation was removed goes to what the slot holds then.
    init(
        key: AnyHashable, body: Body, once: Bool, typed: TypedEntry?, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
        index: Int
    ) throws {
        self.key = key
        slotIndex = index
        self.once = once
        self.typed = typed
        switch body {
        case .plain(let thunk):
            let direct = DirectCall(slot: slot)
            self.direct = direct
            self.body = .plain(try CClosure(thunk: thunk, guard: direct.guardian))
        case .override(let thunk):
            direct = nil
            self.body = .override(thunk)
        }
    }

    /// The closure of a plain implementation.
    var closure: CClosure? {
        guard case .plain(let closure) = body else { return nil }
        return closure
    }

    /// The C function a slot can hold directly: a plain implementation that may serve every call.
    var directAddress: UnsafeRawPointer? {
        guard case .plain(let closure) = body, !once else { return nil }
        return closure.address
    }

    /// Whether this call may run the implementation: always, unless it serves one call and that call
    /// has been taken (possibly by another thread at the same moment).
    func claim() -> Bool {
        !once || claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    var isSpent: Bool { once && claimed.load(ordering: .acquiring) }
}

/// The guard of a plain implementation that C calls directly through its slot (`cffi_guard`).
///
/// Removing the implementation retires the guard and waits until no thread is running it (see
/// `cffi_enter` in the shim): a call that loaded the slot just before the removal, and enters only
/// after it, sees the retirement and goes to what the slot holds now instead.
final class DirectCall: Retirable, @unchecked Sendable {  // The guard is written once, before C can call.
    let guardian: UnsafeMutablePointer<cffi_guard>

    init(slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guardian = .allocate(capacity: 1)
        guardian.initialize(to: cffi_guard(handler: nil, user_data: nil, slot: UnsafePointer(slot), retired: 0))
    }

    deinit { guardian.deallocate() }

    func retire() { cffi_guard_retire(guardian) }

    var runningIdentity: UnsafeRawPointer { UnsafeRawPointer(guardian) }
}

/// A closure or plan that calls may be running: a removal retires it (so no call starts it any more)
/// and then waits until no other thread is running it.
protocol Retirable: AnyObject {
    func retire()
    /// What a running call records (`cffi_enter`).
    var runningIdentity: UnsafeRawPointer { get }
}

/// Waits until no thread but this one runs any of `objects`, which must already be retired.
func waitUntilNotRunning(_ objects: [any Retirable]) {
    for object in objects { cffi_wait_until_not_running(object.runningIdentity) }
}

/// A layer's closure with its Swift types, so that a `next` of the same types can call it directly
/// instead of laying the arguments out again for libffi. Generated subclasses (`Plain2<A0, A1, R>`,
/// `Override2<A0, A1, R>`, …) each hold one closure.
@usableFromInline
class TypedEntry {
    @usableFromInline init() {}
}

/// An implementation that receives ``Next``, the way to call what lies below it.
@usableFromInline
final class OverrideThunk: Sendable {
    @usableFromInline
    typealias Body = @Sendable (CallContext, UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void

    @usableFromInline let signature: CSignature
    @usableFromInline let body: Body

    @usableFromInline
    init(signature: CSignature, body: @escaping Body) {
        self.signature = signature
        self.body = body
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
