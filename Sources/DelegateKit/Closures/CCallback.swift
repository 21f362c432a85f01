import Synchronization

/// A C function pointer whose closure is not owned by a Swift object: it frees itself after its first
/// call (`oneShot(_:)`), or C frees it through a destroy notification (``NotifiedCallback``).
/// GObject Introspection calls these scopes "async" and "notified".
public struct CCallback: @unchecked Sendable {  // The code it points to is kept alive as its scope says.
    /// The C signature of ``address``.
    public let signature: CSignature
    /// The C-callable code.
    public let address: UnsafeRawPointer
    /// The closure's Swift function type, for checking ``functionPointer(as:)``'s struct and enum parameters.
    let swiftType: Any.Type?

    init(signature: CSignature, address: UnsafeRawPointer, swiftType: Any.Type?) {
        self.signature = signature
        self.address = address
        self.swiftType = swiftType
    }

    /// ``address`` as a Swift `@convention(c)` function type, checked against ``signature`` as
    /// ``CClosure/functionPointer(as:)`` checks it: a type that does not fit stops the program with a
    /// message naming both types.
    public func functionPointer<F>(as type: F.Type = F.self) -> F {
        FunctionPointerType.pointer(address, as: type, fits: signature, closureType: swiftType, call: "CCallback.functionPointer(as:)")
    }

    /// ``functionPointer(as:)``, but a type that does not fit ``signature`` throws
    /// ``DelegateError/functionTypeMismatch(call:signature:requested:reason:)`` instead of stopping.
    public func checkedFunctionPointer<F>(as type: F.Type = F.self) throws -> F {
        try FunctionPointerType.checkedPointer(
            address, as: type, fits: signature, closureType: swiftType, call: "CCallback.checkedFunctionPointer(as:)")
    }
}

/// A callback C releases: pass ``userData`` and ``destroyNotify`` where a C API takes a user-data pointer
/// and a destroy function (`sqlite3_create_function_v2`'s `pApp` and `xDestroy`, GLib's `GDestroyNotify`).
public struct NotifiedCallback: @unchecked Sendable {  // userData is an opaque retained reference.
    /// The function pointer itself.
    public let callback: CCallback
    /// What C passes back to ``destroyNotify``: it owns the closure until then.
    public let userData: UnsafeMutableRawPointer
    /// `void (*)(void *)`: releases the closure; C must not call the callback after calling it.
    public let destroyNotify: @convention(c) (UnsafeMutableRawPointer?) -> Void
}

extension CCallback {
    /// A C function pointer that keeps its closure alive until its first call returns, then frees it:
    /// for completion callbacks, which C calls exactly once.
    ///
    /// A second call is a bug in the C code: while the code is still mapped it runs nothing and returns
    /// the default value; after it is freed, anything can happen. The code of a finished one-shot closure
    /// is freed when a later one is made (never from inside its own call).
    @inlinable
    public static func oneShot<each A: CValue, R: CValue>(_ body: @escaping @Sendable (repeat each A) -> R) throws -> CCallback {
        try OneShot.make(CallThunk.typed(body))
    }

    /// A one-shot C function pointer returning `void`.
    @inlinable
    public static func oneShot<each A: CValue>(_ body: @escaping @Sendable (repeat each A) -> Void) throws -> CCallback {
        try OneShot.make(CallThunk.typed(body))
    }
}

extension NotifiedCallback {
    /// A C function pointer whose closure lives until C calls ``destroyNotify`` with ``userData``.
    @inlinable
    public init<each A: CValue, R: CValue>(_ body: @escaping @Sendable (repeat each A) -> R) throws {
        self.init(releasing: try CClosure(thunk: CallThunk.typed(body), joinsScope: false))
    }

    /// A C function pointer returning `void` whose closure lives until C calls the destroy notification.
    @inlinable
    public init<each A: CValue>(_ body: @escaping @Sendable (repeat each A) -> Void) throws {
        self.init(releasing: try CClosure(thunk: CallThunk.typed(body), joinsScope: false))
    }

    /// Hands `closure` to C: one reference, released by ``destroyNotify``.
    @usableFromInline
    init(releasing closure: CClosure) {
        callback = CCallback(signature: closure.signature, address: closure.address, swiftType: closure.swiftType)
        userData = Unmanaged.passRetained(closure).toOpaque()
        destroyNotify = { userData in
            guard let userData else { return }
            Unmanaged<CClosure>.fromOpaque(userData).release()
        }
    }
}

extension CClosure {
    /// Renamed `CCallback.oneShot(_:)`: it makes a ``CCallback``, not a `CClosure`.
    @available(*, deprecated, renamed: "CCallback.oneShot")
    public static func oneShot<each A: CValue, R: CValue>(_ body: @escaping @Sendable (repeat each A) -> R) throws -> CCallback {
        try CCallback.oneShot(body)
    }

    /// Renamed `NotifiedCallback(_:)`: it makes a ``NotifiedCallback``, not a `CClosure`.
    @available(*, deprecated, renamed: "NotifiedCallback.init")
    public static func releasedByC<each A: CValue, R: CValue>(_ body: @escaping @Sendable (repeat each A) -> R) throws -> NotifiedCallback {
        try NotifiedCallback(body)
    }
}

/// One-shot closures: each is kept in a list from its creation until its call has finished, then a
/// later ``make(_:)`` frees it. One that is never called stays listed (C may still call it), which
/// leak checkers report as reachable, not lost.
@usableFromInline
enum OneShot {
    /// A closure whose call has finished, or one not yet called.
    final class Entry: @unchecked Sendable {  // The closure is set once, before C can call it.
        var closure: CClosure?
        let fired = Atomic<Bool>(false)
        /// Set as the very last step of the call: after it, nothing of the closure is touched again.
        let finished = Atomic<Bool>(false)
    }

    /// Every one-shot not yet freed; the next ``make(_:)`` frees those whose call has finished.
    private static let entries = Locked<[Entry]>([])

    @usableFromInline
    static func make(_ thunk: CallThunk) throws -> CCallback {
        // Free what earlier one-shots left, outside the lock (deinitializers may run user code).
        let done = Self.entries.withLock { entries in
            let done = entries.filter { $0.finished.load(ordering: .acquiring) }
            entries.removeAll { $0.finished.load(ordering: .acquiring) }
            return done
        }
        for entry in done { entry.closure = nil }

        let entry = Entry()
        let closure = try CClosure(thunk: CallThunk(prepared: thunk.prepared) { [entry] result, arguments in
            guard !entry.fired.exchange(true, ordering: .acquiringAndReleasing) else {
                return thunk.prepared.zeroResult(result)
            }
            thunk.body(result, arguments)
            entry.finished.store(true, ordering: .releasing)
        }, joinsScope: false)  // its lifetime is its own: freed after its call
        entry.closure = closure
        Self.entries.withLock { $0.append(entry) }
        return CCallback(signature: closure.signature, address: closure.address, swiftType: thunk.swiftType)
    }
}
