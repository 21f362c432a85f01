/// A variadic C function pointer, `R (*)(A…, ...)`: the closure takes the fixed arguments as its Swift
/// types say, then the rest as ``CVariadicArguments``.
///
/// ```swift
/// // libxml2's xmlGenericErrorFunc, `void (*)(void *ctx, const char *msg, ...)`
/// let handler = try CClosure { (context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
///     log(arguments.formatted(format!))
/// }
/// ```
///
/// The fixed arguments may be integers, pointers, `float` and `double` (as many as the registers hold),
/// and the result `void`, an integer, a pointer, `float` or `double`; anything else throws
/// ``DelegateError/invalidSignature(_:reason:)``. A variadic closure's calls always take libffi's path.
/// Its ``CClosure/signature`` is ``CSignature/isVariadic``, as is the one ``CSignature/init(parsing:typedefs:)``
/// reads from `void (*)(void *, const char *, ...)`; ``CClosure/init(signature:_:)`` takes one too, for a
/// closure that reads only the fixed arguments.
extension CClosure {
    // The typed forms, `CClosure { (context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?,
    // arguments: CVariadicArguments) in … }`, one per count of fixed arguments, are generated
    // (VariadicThunks.generated.swift): Swift cannot call a closure whose pack of parameters comes
    // before another parameter, so no single variadic-generic form could run the closure.

    /// A C function pointer of the variadic type whose fixed arguments and result `signature` gives (the
    /// part before `...`, variadic or not); the closure reads the fixed arguments and sets the result
    /// through the ``CInvocation``, and reads the rest from the ``CVariadicArguments``.
    public convenience init(variadic signature: CSignature, _ body: @escaping @Sendable (CInvocation, CVariadicArguments) -> Void) throws {
        try self.init(thunk: CallThunk.variadic(signature, body))
    }
}
