/// A callback C releases: pass its ``CFunctionPointerConvertible/functionPointer(as:)``, ``userData`` and
/// ``destroyNotify`` where a C API takes a function, a user-data pointer and a destroy function
/// (`sqlite3_create_function_v2`'s `pApp` and `xDestroy`, GLib's `GDestroyNotify`).
public struct NotifiedCallback: CFunctionPointerConvertible, ClosureTypeProviding, @unchecked Sendable {  // userData is an opaque retained reference.
    /// The function pointer itself.
    let callback: CCallback
    /// What C passes back to ``destroyNotify``: it owns the closure until then.
    public let userData: UnsafeMutableRawPointer
    /// `void (*)(void *)`: releases the closure; C must not call the callback after calling it.
    public let destroyNotify: @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// ``destroyNotify`` as the destroy function type a C API declares, when it passes more than the user
    /// data: GObject's `GClosureNotify`, `void (*)(gpointer data, GClosure *closure)`, for
    /// `g_signal_connect_data`. `F` must be a `@convention(c)` function type returning `void` whose
    /// parameters are one or two pointers, the first being ``userData``; a second is ignored. Throws
    /// ``DelegateError/functionTypeMismatch(call:signature:requested:reason:)`` for any other type.
    ///
    /// ```swift
    /// let id = g_signal_connect_data(object, "notify", try handler.functionPointer(erasedAs: GCallback.self),
    ///                                handler.userData, try handler.destroyNotify(as: GClosureNotify.self), GConnectFlags(0))
    /// ```
    public func destroyNotify<F>(as type: F.Type) throws -> F {
        switch FunctionPointerType.voidFunctionParameters(type) {
        case [.pointer]:
            return unsafeBitCast(destroyNotify, to: F.self)
        case [.pointer, .pointer]:
            return unsafeBitCast(Self.releaseIgnoringSecond, to: F.self)
        default:
            throw DelegateError.functionTypeMismatch(
                call: "NotifiedCallback.destroyNotify(as:)", signature: CSignature(.void, [.pointer]),
                requested: String(reflecting: type),
                reason: "a destroy function must be `void (*)(void *)` or `void (*)(void *, void *)`, a @convention(c) "
                    + "function type returning Void whose one or two parameters are pointers, the user data first")
        }
    }

    /// The C-callable code.
    public var address: UnsafeRawPointer { callback.address }
    /// The C signature of ``address``.
    public var signature: CSignature { callback.signature }
    var swiftType: Any.Type? { callback.swiftType }

    /// Releases the closure when C refused the callback, and so will never call ``destroyNotify``: a
    /// registration that failed (`g_signal_connect_data` returning 0 for an unknown signal). C must not
    /// call the callback afterwards.
    ///
    /// - Important: Releases exactly once, as ``destroyNotify`` does: call it only when C did not take
    ///   the callback, and at most once.
    public func release() { destroyNotify(userData) }

    /// `void (*)(void *)`: drops the reference ``init(releasing:)`` handed to C.
    static let releaseUserData: @convention(c) (UnsafeMutableRawPointer?) -> Void = { userData in
        guard let userData else { return }
        Unmanaged<CClosure>.fromOpaque(userData).release()
    }

    /// `void (*)(void *, void *)`: GObject's `GClosureNotify` form of ``destroyNotify``.
    static let releaseIgnoringSecond: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
        userData, _ in releaseUserData(userData)
    }
}

extension NotifiedCallback {
    /// A C function pointer whose closure lives until C calls ``destroyNotify`` with ``userData``. The
    /// closure returns a ``CValue`` type, or nothing for a C function returning `void`; throws as
    /// `CClosure.init(_:)` does.
    @inlinable
    public init<each A: CValue, R>(_ body: @escaping @Sendable (repeat each A) -> R) throws {
        self.init(releasing: try CClosure(thunk: CallThunk.typed(anyResult: body), joinsScope: false))
    }

    /// Hands `closure` to C: one reference, released by ``destroyNotify``.
    @usableFromInline
    init(releasing closure: CClosure) {
        callback = CCallback(signature: closure.signature, address: closure.address, swiftType: closure.swiftType)
        userData = Unmanaged.passRetained(closure).toOpaque()
        destroyNotify = Self.releaseUserData
    }
}
