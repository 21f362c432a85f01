/// What every ``CInvocation`` of one closure checks against: its signature, and each C type's scalar
/// code (0 for a structure), made once when the closure is made.
@usableFromInline
final class InvocationLayout: @unchecked Sendable {  // Immutable; the buffer is freed in deinit.
    let signature: CSignature
    @usableFromInline let argumentCodes: UnsafeMutableBufferPointer<UInt64>
    @usableFromInline let returnCode: UInt64
    @usableFromInline let widening: ReturnWidening

    init(_ signature: CSignature) {
        self.signature = signature
        argumentCodes = .allocate(capacity: signature.argumentTypes.count)
        _ = argumentCodes.initialize(from: signature.argumentTypes.map { $0.scalarCode ?? 0 })
        returnCode = signature.returnType.scalarCode ?? 0
        widening = signature.returnType.widening
    }

    deinit { argumentCodes.deallocate() }
}
