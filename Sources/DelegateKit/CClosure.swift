import CFFIShim

/// A Swift closure made into a real C function pointer, with any C signature, capturing whatever it
/// likes: no `void *` context argument needed.
///
/// ```swift
/// let descending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
///     let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
///     return x < y ? 1 : x > y ? -1 : 0
/// }
/// qsort(&numbers, numbers.count, 4, descending.functionPointer(as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32).self))
/// ```
///
/// ## Lifetime
/// The closure owns its executable code and frees it when it is deinitialized. C must not call
/// ``address`` after that: keep the `CClosure` alive (a stored property, or `withExtendedLifetime`) for as
/// long as C may call it.
///
/// ## Threads
/// C may call the pointer from any thread, any number of times at once, so the closure is `@Sendable`:
/// the compiler checks what it captures. A call takes no lock and allocates nothing.
public final class CClosure: @unchecked Sendable {  // Immutable; the libffi closure is only freed in deinit.
    /// The C signature of ``address``.
    public let signature: CSignature
    /// The C-callable code: pass it wherever C wants a function pointer of ``signature``.
    public let address: UnsafeRawPointer

    /// What libffi's user data points to (unretained): the thunk, or a slot's plan cell.
    private let target: AnyObject
    private let closure: UnsafeMutableRawPointer
    // Keeps the cif alive; the cache already does, but the closure should not depend on that.
    let prepared: FFISignature

    @usableFromInline
    convenience init(thunk: CallThunk) throws {
        try self.init(signature: thunk.signature, handler: CallThunk.entry, target: thunk)
    }

    /// A closure whose calls go to `handler` with `target` as user data; the closure keeps `target` alive.
    init(signature: CSignature, handler: cffi_closure_handler, target: AnyObject) throws {
        let prepared = try FFISignature.prepared(signature)
        var code: UnsafeMutableRawPointer?
        let userData = Unmanaged.passUnretained(target).toOpaque()
        guard let closure = cffi_closure_create(prepared.cif, handler, userData, &code), let code else {
            throw DelegateError.closureAllocationFailed(signature)
        }
        self.signature = signature
        self.address = UnsafeRawPointer(code)
        self.target = target
        self.closure = closure
        self.prepared = prepared
    }

    /// A C function pointer whose signature comes from the closure's Swift types.
    ///
    /// Throws ``DelegateError/layoutMismatch(type:cType:swiftSize:swiftAlignment:)`` or
    /// ``DelegateError/notTrivial(type:)`` when a ``CValue`` type's stated C layout cannot be right.
    @inlinable
    public convenience init<each A: CValue, R: CValue>(_ body: @escaping @Sendable (repeat each A) -> R) throws {
        try self.init(thunk: CallThunk.typed(body))
    }

    /// A C function pointer returning `void`, whose argument types come from the closure's Swift types.
    @inlinable
    public convenience init<each A: CValue>(_ body: @escaping @Sendable (repeat each A) -> Void) throws {
        try self.init(thunk: CallThunk.typed(body))
    }

    /// A C function pointer for a signature known only at run time; the closure reads its arguments and
    /// sets its result through the ``CInvocation``.
    public convenience init(signature: CSignature, _ body: @escaping @Sendable (CInvocation) -> Void) throws {
        try self.init(thunk: CallThunk.dynamic(signature, body))
    }

    deinit {
        cffi_closure_free(closure)
    }

    /// ``address`` as a Swift `@convention(c)` function type, for passing to imported C functions.
    ///
    /// `F` must be a `@convention(c)` function type (optional or not) whose parameters match ``signature``;
    /// Swift cannot check a C function type's parameters generically, so only its size is checked.
    public func functionPointer<F>(as type: F.Type = F.self) -> F {
        precondition(
            MemoryLayout<F>.size == MemoryLayout<UnsafeRawPointer>.size,
            "\(F.self) is not a @convention(c) function type")
        return unsafeBitCast(address, to: F.self)
    }
}

