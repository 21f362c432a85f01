import Synchronization

/// One entry of a slot's stack: a closure and how it is called.
@usableFromInline
final class Implementation: Retirable, @unchecked Sendable {  // Immutable but for the atomic `claimed`.
    /// How the closure runs: on its own, or handed the implementation below it.
    @usableFromInline
    enum Thunk: Sendable {
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
    init(key: AnyHashable, body: Thunk, once: Bool, typed: TypedEntry?, stub: SlotStub?, index: Int) {
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
    static func stubSignature(_ body: Thunk, once: Bool) -> PreparedSignature? {
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

    /// Gives the stub back, idle and unbound, for the slot to reuse: only once no call runs it.
    func releaseStub() -> SlotStub? {
        stub?.unbind()
        return stub
    }

    var runningIdentity: UnsafeRawPointer {
        stub?.runningIdentity ?? UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }
}
