import Glibc

extension CallbackExit {
    /// Leave by a `longjmp` to `target`: the call catching jumps there
    /// (``CFunction/call(catchingJumpsTo:_:returning:)->JumpOutcome<R>``) returns
    /// ``JumpOutcome/jumped(_:)`` with `value` (1 when `value` is 0, as `longjmp` does).
    ///
    /// The closure that throws it must run inside that call, on its thread; otherwise the throw stops the
    /// program with a message, as the jump's behavior would be undefined.
    public static func jump(to target: JumpTarget, value: Int32 = 1) -> CallbackExit {
        CallbackExit {
            require(target.isArmed, "a closure threw CallbackExit.jump(to:) with no call catching jumps to that "
                + "JumpTarget running on this thread: throw it only from inside CFunction.call(catchingJumpsTo:…), "
                + "on its thread")
            CallbackExitShim.requestJump(to: target.buffer, value: value)
        }
    }

    /// Leave by calling `function`, a C function that never returns (libpng's `png_error`, Lua's
    /// `lua_error`), with `arguments`, converted to its C types as ``CFunction/call(_:variadicTypes:)``
    /// converts them.
    ///
    /// The values are converted now and copied when the closure throws, so they need not outlive the
    /// closure; what a pointer among them points to must (a message, say: a `StaticString`'s
    /// `utf8Start`, or memory the C library owns; a ``CClosure`` passed as ``CDynamicValue/function(_:)``
    /// is not kept alive by the exit). A function that returns after all stops the program with a
    /// message, as the callback cannot go on.
    ///
    /// Throws as ``CFunction/call(_:variadicTypes:)`` does for arguments that do not fit, and
    /// ``DelegateError/callMismatch(function:declaration:call:reason:)`` for a variadic function or for
    /// arguments (or a result) too large to keep for the exit.
    public static func call(_ function: CFunction, _ arguments: [CDynamicValue]) throws -> CallbackExit {
        try refuseVariadic(function)
        // The values in libffi's form now, so that a bad one throws here; the prepared call lives for ever.
        let (call, bytes, offsets) = try arguments.withUnsafeBufferPointer { values in
            try function.withRunTimeArguments(values, variadicTypes: []) { call, layout, storage, _ in
                let bytes = [UInt8](UnsafeRawBufferPointer(start: storage, count: layout.byteCount))
                let offsets = (0..<layout.arguments.count).map { layout.arguments[$0].offset }
                return (call, bytes, offsets)
            }
        }
        return try CallbackExit(calling: function, call, bytes: bytes, offsets: offsets)
    }

    /// Leave by calling `function`, a C function that never returns, with `argument`s of ``CValue``
    /// types, checked against its signature as ``CFunction/call(_:)-8dedy`` checks them:
    ///
    /// ```swift
    /// throw try CallbackExit.call(pngError, png, shortRead)   // png_error(png, "short read")
    /// ```
    ///
    /// The values are copied now; what a pointer among them points to must outlive the closure, as for
    /// ``call(_:_:)-(CFunction,[CDynamicValue])``.
    ///
    /// Throws ``DelegateError/callMismatch(function:declaration:call:reason:)`` naming both signatures
    /// when the arguments do not fit the function's, for a variadic function, or for arguments too large
    /// to keep for the exit.
    public static func call<each A: CValue>(_ function: CFunction, _ argument: repeat each A) throws -> CallbackExit {
        try refuseVariadic(function)
        try function.check(repeat each argument, returning: CVoid.self, checkingResult: false)
        guard let call = function.libffiCall else { preconditionFailure("a CFunction that is not variadic has its call") }
        var bytes: [UInt8] = []
        var offsets: [Int] = []
        for value in repeat each argument {
            offsets.append(bytes.count)
            withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
            let size = MemoryLayout.size(ofValue: value)
            bytes.append(contentsOf: repeatElement(0, count: argumentSlotSize(size) - size))
        }
        return try CallbackExit(calling: function, call, bytes: bytes, offsets: offsets)
    }

    private static func refuseVariadic(_ function: CFunction) throws {
        guard function.isVariadic else { return }
        throw DelegateError.callMismatch(
            function: function.name, declaration: function.declaration, call: function.signature,
            reason: "a CallbackExit cannot call a variadic function; call one that takes a fixed list")
    }

    /// The exit that calls `function` by `call` with argument values in libffi's form (`bytes`, each
    /// argument at its offset), once they are known to fit in the thread's request.
    private init(calling function: CFunction, _ call: LibffiCall, bytes: [UInt8], offsets: [Int]) throws {
        let capacity = CallbackExitShim.requestedCallCapacity
        guard bytes.count <= capacity.arguments, call.resultBufferSize <= capacity.result else {
            throw DelegateError.callMismatch(
                function: function.name, declaration: function.declaration, call: function.signature,
                reason: "its arguments or result take more than the \(capacity.arguments) and \(capacity.result) bytes "
                    + "a CallbackExit keeps")
        }
        let exit = RequestedCall(cif: call.cif, function: function.address, bytes: bytes, offsets: offsets)
        self.init { exit.request() }
    }
}

/// A call a ``CallbackExit`` asks for: the values in libffi's form, copied into the thread's request when
/// the closure throws.
private struct RequestedCall: @unchecked Sendable {  // Immutable; the cif and the function live for ever.
    let cif: UnsafeMutablePointer<LibffiShim.CallInterface>
    let function: UnsafeRawPointer
    let bytes: [UInt8]
    let offsets: [Int]

    func request() {
        var bytes = bytes
        bytes.withUnsafeMutableBytes { storage in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(offsets.count, 1)) { pointers in
                for (index, offset) in offsets.enumerated() { pointers[index] = storage.baseAddress.unsafelyUnwrapped + offset }
                // Checked when the exit was made: the values and the result fit.
                _ = CallbackExitShim.requestCall(cif, function, pointers.baseAddress.unsafelyUnwrapped)
            }
        }
    }
}
