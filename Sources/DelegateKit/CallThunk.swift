import CFFIShim

/// The Swift side of a closure's call: reads libffi's argument array, runs the user's closure, writes the
/// result. One per closure; libffi's user-data pointer points at it, unretained, so a call costs no
/// retain/release, no lock and no allocation (the owning ``CClosure`` keeps it alive).
@usableFromInline
final class CallThunk: Sendable {
    /// `(result, arguments)` exactly as libffi hands them to a closure handler.
    @usableFromInline
    typealias Body = @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void

    @usableFromInline let signature: CSignature
    @usableFromInline let body: Body

    @usableFromInline
    init(signature: CSignature, body: @escaping Body) {
        self.signature = signature
        self.body = body
    }

    /// The thunk for a closure with typed arguments. `@inlinable` so it is specialized for the concrete
    /// argument types in the caller's module: unspecialized pack code costs far more per call.
    @inlinable
    static func typed<each A: CValue, R: CValue>(
        _ closure: @escaping @Sendable (repeat each A) -> R
    ) throws -> CallThunk {
        let signature = try CSignature.of(R.self, repeat (each A).self)
        let widening = signature.returnType.widening
        return CallThunk(signature: signature) { result, arguments in
            var cursor = arguments
            storeResult(closure(repeat nextArgument(&cursor) as each A), to: result, widening)
        }
    }

    /// The thunk for a closure that returns nothing.
    @inlinable
    static func typed<each A: CValue>(
        _ closure: @escaping @Sendable (repeat each A) -> Void
    ) throws -> CallThunk {
        try typed { (argument: repeat each A) -> CVoid in
            closure(repeat each argument)
            return CVoid()
        }
    }

    /// The thunk for a closure that reads its arguments through a ``CInvocation``.
    static func dynamic(_ signature: CSignature, _ closure: @escaping @Sendable (CInvocation) -> Void) -> CallThunk {
        let widening = signature.returnType.widening
        // A closure that forgets to set a result must not hand C stale stack bytes.
        let resultBytes = widening == .none ? signature.returnType.size : MemoryLayout<UInt64>.size
        return CallThunk(signature: signature) { result, arguments in
            result.initializeMemory(as: UInt8.self, repeating: 0, count: resultBytes)
            closure(CInvocation(signature: signature, result: result, arguments: arguments, widening: widening))
        }
    }

    /// The one function libffi calls for every DelegateKit closure.
    static let entry: cffi_closure_handler = { _, result, arguments, userData in
        // libffi passes a valid result buffer always, and an argument array that is only empty when
        // the signature has no arguments; neither is read beyond what the signature says.
        Unmanaged<CallThunk>.fromOpaque(userData.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            $0.body(result.unsafelyUnwrapped, arguments ?? noArguments)
        }
    }
}

/// Stands in for a NULL argument array, which libffi could pass for a signature without arguments:
/// never read, since such a signature has nothing to read.
var noArguments: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
    UnsafeMutablePointer(bitPattern: MemoryLayout<UnsafeMutableRawPointer?>.alignment).unsafelyUnwrapped
}
