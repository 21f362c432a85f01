import Synchronization

/// One entry of a slot's stack: a closure and how it is called.
///
/// A plain implementation is itself what its slot's stub and its plans call (``entry``, ``call(_:)``):
/// one object per implementation rather than a second one for its closure. The delegate drops it when
/// it is removed and no call runs it, which releases the user's closure.
@usableFromInline
final class Implementation: Retirable, @unchecked Sendable {  // Immutable but for the atomic `claimed`.
    /// How the closure runs: on its own, or handed the implementation below it.
    @usableFromInline
    enum Thunk: Sendable {
        case plain(CallThunk)
        case override(OverrideThunk)
    }

    let key: SlotKey
    /// A plain implementation's closure, run on libffi's argument array (``entry``); never called for an
    /// override.
    let body: CallThunk.ArrayBody
    /// A plain implementation's call in register form, for a slot whose signature takes registers (see
    /// ``RegisterPath``).
    let registers: RegisterBody
    /// What the implementation runs besides ``body``: an override's closure, or a plain thunk's pack
    /// form (whose handler in C runs its calls from libffi's array; without one, ``entry`` runs
    /// ``body``). One word for the two, which never come together: the two optionals (and an index nothing
    /// read) took three more words. The implementation is 82 bytes, a 96-byte malloc chunk.
    private let form: Form

    private enum Form {
        case plain
        case pack(PackFunction)
        case override(OverrideThunk)
    }

    /// An override's closure, handed the way to call what lies below it; nil for a plain implementation.
    var override: OverrideThunk? {
        if case .override(let thunk) = form { return thunk }
        return nil
    }

    /// What C enters when the slot holds this implementation directly: plain ones that serve every call.
    /// Bound to this implementation for as long as it is in the slot.
    let stub: SlotStub?
    /// The closure with its Swift types, when it was given through a fixed-arity API.
    let typed: TypedEntry?
    /// Runs for exactly one call, then removes itself.
    let once: Bool
    /// Set by the one call a `once` implementation may serve.
    private let claimed = Atomic<Bool>(false)

    /// `stub` must be given for a plain implementation that is not `once`, and only then.
    init(key: SlotKey, body: Thunk, once: Bool, typed: TypedEntry?, stub: SlotStub?) {
        self.key = key
        self.once = once
        self.typed = typed
        switch body {
        case .plain(let thunk):
            self.body = thunk.body
            registers = thunk.registerForm()
            form = thunk.pack.map { .pack($0) } ?? .plain
        case .override(let thunk):
            self.body = Implementation.neverCalled
            registers = .unused
            form = .override(thunk)
        }
        self.stub = stub
        stub?.bind(self)
    }

    /// An override's ``body``: a function value with no context, so it costs no allocation.
    private static let neverCalled: CallThunk.ArrayBody = { _, _ in }

    /// The prepared signature for a stub of its own (see ``stub``), or nil when it is called only
    /// through the slot's plans.
    static func stubSignature(_ body: Thunk, once: Bool) -> PreparedSignature? {
        guard case .plain(let thunk) = body, !once else { return nil }
        return thunk.prepared
    }

    /// The C function a slot can hold directly: a plain implementation that may serve every call.
    var directAddress: UnsafeRawPointer? { stub?.address }

    /// What a published ``SlotStub`` entered by libffi's array runs, and its user data: the thunk's handler
    /// in C, or ``entry`` with this object, unretained (valid while this object lives).
    var libffiHandler: (function: LibffiShim.Handler, userData: UnsafeMutableRawPointer) {
        guard case .pack(let pack) = form else {
            return (Implementation.entry, Unmanaged.passUnretained(self).toOpaque())
        }
        let handler = pack.handler
        return (handler.function, handler.userData)
    }

    /// The handler that runs ``body``, with a plain `Implementation` (unretained) as user data.
    static let entry: LibffiShim.Handler = { _, result, arguments, userData in
        Unmanaged<Implementation>.fromOpaque(userData.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            $0.body(result.unsafelyUnwrapped, arguments ?? noArguments)
        }
    }

    /// Runs a plain implementation's register form (present whenever the call entered in register form).
    @inline(__always)
    func call(_ r: ArgumentRegisters) -> RegisterResult {
        registers.call(
            r.integers.0, r.integers.1, r.integers.2, r.integers.3, r.integers.4,
            r.sse.0, r.sse.1, r.sse.2, r.sse.3, r.sse.4, r.sse.5, r.sse.6, r.sse.7)
    }

    /// Whether this call may run the implementation: always, unless it serves one call and that call
    /// has been taken (possibly by another thread at the same moment).
    func claim() -> Bool {
        !once || claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    var isSpent: Bool { once && claimed.load(ordering: .acquiring) }

    /// Stops calls entering through the stub (they go to what the slot holds now).
    func retire() { stub?.retire() }

    /// Gives the stub back, idle and unbound, for the slot to reuse: only once no call runs it.
    func releaseStub() -> SlotStub? {
        stub?.unbind()
        return stub
    }

    var runningIdentity: UnsafeRawPointer {
        stub?.runningIdentity ?? UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }
}
