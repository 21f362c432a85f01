/// One call of a closure whose signature is known only at run time: read the arguments, set the result.
///
/// Valid only during the call it was made for; do not keep it.
public struct CInvocation {
    @usableFromInline let layout: Unmanaged<InvocationLayout>
    @usableFromInline let result: UnsafeMutableRawPointer
    @usableFromInline let arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    /// The closure's layout is kept alive by the closure for as long as C may call it, so a call
    /// neither retains it nor copies the signature.
    init(layout: Unmanaged<InvocationLayout>, result: UnsafeMutableRawPointer, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        self.layout = layout
        self.result = result
        self.arguments = arguments
    }

    /// The signature of the function being called.
    public var signature: CSignature { layout.takeUnretainedValue().signature }

    /// The argument at `index` (from 0) as a `T` whose C type must be the argument's.
    ///
    /// Asking for an index out of range or for another C type stops the program with a message naming
    /// both types: inside a C callback there is no caller to throw to, and a wrong read is silent corruption.
    @inlinable
    public func argument<T: CValue>(_ index: Int, as type: T.Type = T.self) -> T {
        // A scalar's code is a constant here once specialized: the common check is one comparison.
        let code = T.cType.scalarCode ?? 0
        let matches = layout._withUnsafeGuaranteedRef { layout in
            index >= 0 && index < layout.argumentCodes.count && code != 0 && layout.argumentCodes[index] == code
        }
        if !matches { checkArgument(index, as: T.self) }
        return UnsafeRawPointer(arguments[index].unsafelyUnwrapped).loadUnaligned(as: T.self)
    }

    /// The full check of ``argument(_:as:)``, for what the quick one does not settle (a struct, `Int` for
    /// `size_t`, a mistake) the first time: a type that passes is noted, and not checked again.
    @usableFromInline
    func checkArgument<T: CValue>(_ index: Int, as type: T.Type) {
        let noted = layout._withUnsafeGuaranteedRef { layout in
            index >= 0 && index < layout.argumentCodes.count && layout.hasChecked(index, as: T.self)
        }
        if noted { return }
        let signature = signature
        require(
            signature.argumentTypes.indices.contains(index),
            "argument index \(index) is out of range for C signature `\(signature)`")
        require(
            signature.argumentTypes[index].accepts(T.cType),
            "argument \(index) of `\(signature)` has C type `\(signature.argumentTypes[index])`, not `\(T.cType)` (\(T.self))")
        layout._withUnsafeGuaranteedRef { $0.noteChecked(index, as: T.self) }
    }

    /// The address of the argument at `index`.
    func argumentAddress(_ index: Int) -> UnsafeRawPointer {
        require(
            signature.argumentTypes.indices.contains(index),
            "argument index \(index) is out of range for C signature `\(signature)`")
        return UnsafeRawPointer(arguments[index].unsafelyUnwrapped)
    }

    /// The bytes of the argument at `index`, as many as its C type has: a struct by value read without a
    /// Swift type that states its layout (see ``CValue``). Valid only during the call.
    public func argumentBytes(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: argumentAddress(index), count: signature.argumentTypes[index].size)
    }

    /// Sets the value C receives from its bytes, which must be exactly as many as the return type has: a
    /// struct returned without a Swift type that states its layout. An integer narrower than a register
    /// is widened as libffi widens it.
    ///
    /// ```swift
    /// // `struct { uint8_t tag; double value; } (int)`, the result built byte by byte
    /// var bytes = [UInt8](repeating: 0, count: 16)
    /// bytes[0] = 7
    /// withUnsafeBytes(of: 2.5) { bytes.replaceSubrange(8..<16, with: $0) }
    /// bytes.withUnsafeBytes { invocation.setReturnBytes($0) }
    /// ```
    ///
    /// Another number of bytes stops the program with a message naming the signature, as a wrong type for
    /// ``setReturnValue(_:)`` does.
    public func setReturnBytes(_ bytes: UnsafeRawBufferPointer) {
        let signature = signature
        let size = signature.returnType == .void ? 0 : signature.returnType.size
        require(
            bytes.count == size && size > 0,
            "`\(signature)` returns \(size > 0 ? "\(size) bytes" : "nothing"), not \(bytes.count) (CInvocation.setReturnBytes)")
        if let base = bytes.baseAddress { result.copyMemory(from: base, byteCount: bytes.count) }
        layout._withUnsafeGuaranteedRef { $0.widening }.apply(to: result)
    }

    /// Sets the value C receives when the closure returns; its C type must be the signature's return type.
    /// A closure that never sets it returns zero (or NULL, or an all-zero struct).
    @inlinable
    public func setReturnValue<T: CValue>(_ value: T) {
        let code = T.cType.scalarCode ?? 0
        let widening = layout._withUnsafeGuaranteedRef { layout in
            code != 0 && layout.returnCode == code ? layout.widening : nil
        }
        storeResult(value, to: result, widening ?? checkedReturnWidening(T.self))
    }

    /// The full check of ``setReturnValue(_:)``, noted as ``checkArgument(_:as:)`` notes it; returns the
    /// widening when the type fits.
    @usableFromInline
    func checkedReturnWidening<T: CValue>(_ type: T.Type) -> ReturnWidening {
        if let widening = layout._withUnsafeGuaranteedRef({ $0.hasChecked($0.argumentCodes.count, as: T.self) ? $0.widening : nil }) {
            return widening
        }
        let signature = signature
        require(
            signature.returnType.accepts(T.cType),
            "`\(signature)` returns `\(signature.returnType)`, not `\(T.cType)` (\(T.self))")
        return layout._withUnsafeGuaranteedRef { layout in
            layout.noteChecked(layout.argumentCodes.count, as: T.self)
            return layout.widening
        }
    }
}
