/// One call as ``DynamicDelegate/observeAll(_:owner:_:)`` reports it.
public struct ObservedCall: Sendable, CustomStringConvertible {
    /// The method called.
    public let method: String
    /// Its C signature.
    public let signature: CSignature
    /// The arguments, decoded by their C types.
    public let arguments: [CDynamicValue]
    /// The result C receives; nil before the implementation runs and for `void` methods.
    public let returnValue: CDynamicValue?

    init(method: String, signature: CSignature, result: UnsafeMutableRawPointer?, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        self.method = method
        self.signature = signature
        self.arguments = signature.argumentTypes.indices.map {
            CDynamicValue(UnsafeRawPointer(arguments[$0].unsafelyUnwrapped), signature.argumentTypes[$0])
        }
        if let result, signature.returnType != .void {
            returnValue = CDynamicValue(UnsafeRawPointer(result), signature.returnType)
        } else {
            returnValue = nil
        }
    }

    /// `read(0x…, 0x…, 4096) -> 17`.
    public var description: String {
        "\(method)(\(arguments.map(\.description).joined(separator: ", ")))" + (returnValue.map { " -> \($0)" } ?? "")
    }
}
