/// A value that hands C a function pointer: ``CClosure``, ``CCallback`` and ``NotifiedCallback``.
///
/// Get the pointer out as the function type the C API declares, which is checked against the C
/// signature the closure was made with:
///
/// ```swift
/// let compare = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in … }
/// qsort(&numbers, numbers.count, 4, try compare.functionPointer())
/// ```
///
/// The pointer is valid as long as what it came from says (a ``CClosure`` while it lives; a
/// ``CCallback`` until its call or its destroy notification): it does not keep the closure alive.
/// Within one expression, use `withExtendedLifetime` to keep a ``CClosure`` alive across the C call.
public protocol CFunctionPointerConvertible {
    /// The C-callable code: what a C function pointer to this closure holds.
    var address: UnsafeRawPointer { get }
    /// The C signature of ``address``.
    var signature: CSignature { get }
}

/// What the checks of ``CFunctionPointerConvertible/functionPointer(as:)`` need beyond the public
/// requirements: the closure's Swift function type, for struct and enum parameters.
protocol ClosureTypeProviding {
    var swiftType: Any.Type? { get }
}

extension CFunctionPointerConvertible {
    /// ``address`` as a Swift `@convention(c)` function type, for passing to imported C functions.
    ///
    /// `F` must be a `@convention(c)` function type, optional or not, that fits ``signature``: as many
    /// parameters, each (and the result) of a C type the closure's accepts under the compatibility rules
    /// (pointers interchangeable, signedness kept, `Int` for `size_t`), and a struct or enum parameter of
    /// the closure's own Swift type. Throws
    /// ``DelegateError/functionTypeMismatch(call:signature:requested:reason:)`` naming both types when
    /// it does not fit; each type is checked once.
    public func functionPointer<F>(as type: F.Type = F.self) throws -> F {
        if signature.isVariadic {
            throw DelegateError.functionTypeMismatch(
                call: "\(Self.self).functionPointer(as:)", signature: signature, requested: String(reflecting: type),
                reason: "the closure is variadic and Swift has no function type with `...` (it imports one as "
                    + "OpaquePointer): pass OpaquePointer(address)")
        }
        return try FunctionPointerType.checkedPointer(
            address, as: type, fits: signature, closureType: (self as? any ClosureTypeProviding)?.swiftType,
            call: "\(Self.self).functionPointer(as:)")
    }

    /// ``address`` as an erased C function pointer type, unchecked against ``signature``: for a C API that
    /// stores function pointers of one generic type and casts each back to its real type before calling
    /// it (GLib's `GCallback`, `void (*)(void)`, for signal handlers; `sqlite3_syscall_ptr`; a table
    /// filled through `dlsym`).
    ///
    /// ```swift
    /// g_signal_connect_data(button, "clicked", try closure.functionPointer(erasedAs: GCallback.self), nil, nil, GConnectFlags(0))
    /// ```
    ///
    /// C must call the pointer only as ``signature`` says: nothing here can check what C casts it to.
    /// Throws ``DelegateError/functionTypeMismatch(call:signature:requested:reason:)`` when `F` is not a
    /// `@convention(c)` function type, optional or not.
    public func functionPointer<F>(erasedAs type: F.Type) throws -> F {
        try FunctionPointerType.erasedPointer(address, as: type, signature: signature, call: "\(Self.self).functionPointer(erasedAs:)")
    }
}
