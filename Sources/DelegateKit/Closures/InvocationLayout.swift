import Synchronization

/// What every ``CInvocation`` of one closure checks against: its signature, and each C type's scalar
/// code (0 for a structure), made once when the closure is made.
@usableFromInline
final class InvocationLayout: @unchecked Sendable {  // The buffers are freed in deinit; the notes are atomic.
    let signature: CSignature
    @usableFromInline let argumentCodes: UnsafeMutableBufferPointer<UInt64>
    @usableFromInline let returnCode: UInt64
    @usableFromInline let widening: ReturnWidening

    /// For each argument, and after them the result, the Swift type (its metadata's address; 0 for none)
    /// it was last read or set as once the full check passed. A structure's check compares member by
    /// member, which for a struct of four `double`s cost more than the rest of the call, on every call; a
    /// type's C type never changes, so it passes once per closure. Relaxed: a thread that has not seen
    /// another's note runs the check again, and notes the same.
    let checkedTypes: UnsafeMutablePointer<Atomic<UInt>>

    init(_ signature: CSignature) {
        self.signature = signature
        argumentCodes = .allocate(capacity: signature.argumentTypes.count)
        _ = argumentCodes.initialize(from: signature.argumentTypes.map { $0.scalarCode ?? 0 })
        returnCode = signature.returnType.scalarCode ?? 0
        widening = signature.returnType.widening
        checkedTypes = .allocate(capacity: signature.argumentTypes.count + 1)
        for index in 0...signature.argumentTypes.count {
            (checkedTypes + index).initialize(to: Atomic(0))
        }
    }

    deinit {
        argumentCodes.deallocate()
        checkedTypes.deinitialize(count: argumentCodes.count + 1)
        checkedTypes.deallocate()
    }

    /// Whether `type` passed the full check as argument `index` (in range) or, for `argumentCodes.count`,
    /// as the result.
    func hasChecked(_ index: Int, as type: Any.Type) -> Bool {
        checkedTypes[index].load(ordering: .relaxed) == UInt(bitPattern: ObjectIdentifier(type))
    }

    /// Notes that `type` passed the full check as argument `index` or the result.
    func noteChecked(_ index: Int, as type: Any.Type) {
        checkedTypes[index].store(UInt(bitPattern: ObjectIdentifier(type)), ordering: .relaxed)
    }
}
