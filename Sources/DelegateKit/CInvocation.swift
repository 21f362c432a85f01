/// One call of a closure whose signature is known only at run time: read the arguments, set the result.
///
/// Valid only during the call it was made for; do not keep it.
public struct CInvocation {
    /// The signature of the function being called.
    public let signature: CSignature
    @usableFromInline let result: UnsafeMutableRawPointer
    @usableFromInline let arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let widening: ReturnWidening

    init(
        signature: CSignature, result: UnsafeMutableRawPointer,
        arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>, widening: ReturnWidening
    ) {
        self.signature = signature
        self.result = result
        self.arguments = arguments
        self.widening = widening
    }

    /// The number of arguments C passed.
    public var argumentCount: Int { signature.argumentTypes.count }

    /// The argument at `index` (from 0) as a `T` whose C type must be the argument's.
    ///
    /// Asking for an index out of range or for another C type stops the program with a message naming
    /// both types: inside a C callback there is no caller to throw to, and a wrong read is silent corruption.
    public func argument<T: CValue>(_ index: Int, as type: T.Type = T.self) -> T {
        require(
            signature.argumentTypes.indices.contains(index),
            "argument index \(index) is out of range for C signature `\(signature)`")
        require(
            signature.argumentTypes[index].accepts(T.cType),
            "argument \(index) of `\(signature)` has C type `\(signature.argumentTypes[index])`, not `\(T.cType)` (\(T.self))")
        return UnsafeRawPointer(arguments[index].unsafelyUnwrapped).loadUnaligned(as: T.self)
    }

    /// The address of the argument at `index`, for reading it as raw bytes.
    public func argumentAddress(_ index: Int) -> UnsafeRawPointer {
        require(
            signature.argumentTypes.indices.contains(index),
            "argument index \(index) is out of range for C signature `\(signature)`")
        return UnsafeRawPointer(arguments[index].unsafelyUnwrapped)
    }

    /// Sets the value C receives when the closure returns; its C type must be the signature's return type.
    /// A closure that never sets it returns zero (or NULL, or an all-zero struct).
    public func setReturnValue<T: CValue>(_ value: T) {
        require(
            signature.returnType.accepts(T.cType),
            "`\(signature)` returns `\(signature.returnType)`, not `\(T.cType)` (\(T.self))")
        storeResult(value, to: result, widening)
    }
}
