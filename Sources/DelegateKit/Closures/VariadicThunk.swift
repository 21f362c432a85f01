/// The Swift side of a variadic signature's calls, for a ``CClosure`` and a slot's implementation alike:
/// libffi hands the handler the fixed arguments and the padding ``VariadicLayout`` adds, and the thunk
/// rebuilds from the padding the frame a variadic function's prologue would have saved.
extension CallThunk {
    /// The thunk for a closure of `signature` (made ``CSignature/isVariadic``): `body` gets libffi's result
    /// and arguments (the fixed ones first) and the variadic ones.
    @usableFromInline
    static func variadic(
        _ signature: CSignature,
        body: @escaping @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>, CVariadicArguments) -> Void
    ) throws -> CallThunk {
        var signature = signature
        signature.isVariadic = true
        let prepared = try PreparedSignature.prepared(signature)
        let layout = prepared.variadicLayout.unsafelyUnwrapped
        let (count, integers, vectors) = (signature.argumentTypes.count, layout.integersUsed, layout.vectorsUsed)
        let frameSize = LibffiShim.variadicFrameSize
        let resultSize = prepared.resultBufferSize
        return CallThunk(prepared: prepared) { result, arguments in
            PreparedSignature.zeroResult(result, byteCount: resultSize)  // for a closure that sets no result
            withUnsafeTemporaryAllocation(byteCount: frameSize, alignment: 16) { frame in
                let frame = frame.baseAddress.unsafelyUnwrapped
                LibffiShim.fillVariadicFrame(frame, pads: arguments + count, integersUsed: integers, vectorsUsed: vectors)
                body(result, arguments, CVariadicArguments(frame: frame))
            }
        }
    }

    /// The thunk for a closure that reads the fixed arguments and sets the result through a
    /// ``CInvocation`` of `signature`, and reads the rest from the ``CVariadicArguments``.
    static func variadic(_ signature: CSignature, _ body: @escaping @Sendable (CInvocation, CVariadicArguments) -> Void) throws -> CallThunk {
        let layout = InvocationLayout(signature)
        return try variadic(signature) { result, arguments, rest in
            // The thunk's closure holds the layout for as long as C may call it.
            body(CInvocation(layout: Unmanaged.passUnretained(layout), result: result, arguments: arguments), rest)
        }
    }
}
