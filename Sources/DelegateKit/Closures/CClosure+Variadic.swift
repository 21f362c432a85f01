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
extension CClosure {
    // The typed forms, `CClosure { (context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?,
    // arguments: CVariadicArguments) in … }`, one per count of fixed arguments, are generated
    // (VariadicClosures.generated.swift): Swift lets no parameter follow a pack in a closure's type.

    /// A C function pointer of the variadic type whose fixed arguments and result `signature` gives (the
    /// part before `...`); the closure reads the fixed arguments and sets the result through the
    /// ``CInvocation``, and reads the rest from the ``CVariadicArguments``.
    public convenience init(variadic signature: CSignature, _ body: @escaping @Sendable (CInvocation, CVariadicArguments) -> Void) throws {
        let layout = InvocationLayout(signature)
        try self.init(variadic: signature) { result, arguments, rest in
            // The closure holds the layout for as long as C may call it.
            body(CInvocation(layout: Unmanaged.passUnretained(layout), result: result, arguments: arguments), rest)
        }
    }

    /// The closure behind every variadic form: `body` gets libffi's result and arguments (the fixed ones
    /// first) and the variadic ones, read from the padding arguments of ``VariadicLayout``.
    @usableFromInline
    convenience init(
        variadic fixed: CSignature,
        body: @escaping @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>, CVariadicArguments) -> Void
    ) throws {
        let layout = try VariadicLayout(fixed)
        let prepared = try PreparedSignature.prepared(layout.padded)
        let (count, integers, vectors) = (fixed.argumentTypes.count, layout.integersUsed, layout.vectorsUsed)
        let frameSize = LibffiShim.variadicFrameSize
        let resultSize = prepared.resultBufferSize
        try self.init(
            prepared: prepared,
            body: { result, arguments in
                PreparedSignature.zeroResult(result, byteCount: resultSize)  // for a closure that sets no result
                withUnsafeTemporaryAllocation(byteCount: frameSize, alignment: 16) { frame in
                    let frame = frame.baseAddress.unsafelyUnwrapped
                    LibffiShim.fillVariadicFrame(frame, pads: arguments + count, integersUsed: integers, vectorsUsed: vectors)
                    body(result, arguments, CVariadicArguments(frame: frame))
                }
            },
            handler: CClosure.entry, target: nil, declared: fixed)
        CallbackScope.adopt(self)
    }
}
