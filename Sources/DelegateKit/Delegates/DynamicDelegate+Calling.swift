extension DynamicDelegate {
    /// The function keeps the delegate alive.
    ///
    /// Throws ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` when `type` does not
    /// have the method's C signature.
    @inlinable
    public func implementation<each A: CValue, R: CValue>(
        for method: String, as type: ((repeat each A) -> R).Type
    ) throws -> ((repeat each A) -> R)? {
        let signature = try CSignature.of(R.self, repeat (each A).self)
        guard let slot = try currentSlot(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) -> R in slot.call(repeat each argument) }
    }

    /// What C would call for a `void` method right now, as a Swift function of the given type, or nil.
    @inlinable
    public func implementation<each A: CValue>(
        for method: String, as type: ((repeat each A) -> Void).Type
    ) throws -> ((repeat each A) -> Void)? {
        let signature = try CSignature.of(CVoid.self, repeat (each A).self)
        guard let slot = try currentSlot(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) in
            let _: CVoid = slot.call(repeat each argument)
        }
    }

    @usableFromInline
    func currentSlot(for method: String, checking signature: CSignature) throws -> SlotFunction? {
        let index = try descriptor.methodIndex(of: method)
        try slots.checkSignature(signature, of: index)
        guard loadSlot(index) != nil else { return nil }
        return SlotFunction(delegate: self, offset: descriptor.methods[index].offset,
                            prepared: try PreparedSignature.prepared(descriptor.methods[index].signature))
    }

    func loadSlot(_ index: Int) -> UnsafeRawPointer? {
        let slot = (table + descriptor.methods[index].offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        return RetirementShim.load(slot).map(UnsafeRawPointer.init)
    }
}

/// Calls a slot of a delegate's table through libffi, as C would.
@usableFromInline
struct SlotFunction: @unchecked Sendable {  // The table is the delegate's, which `delegate` keeps alive.
    let delegate: DynamicDelegate
    let offset: Int
    let prepared: PreparedSignature

    @usableFromInline
    func call<each A: CValue, R: CValue>(_ argument: repeat each A) -> R {
        let slot = (delegate.table + offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        return withArgumentArray(repeat each argument) { arguments in
            withResultBuffer(prepared, returning: R.self) { result in
                if let function = RetirementShim.load(slot) {
                    prepared.call(function, result: result, arguments: arguments)
                }
            }
        }
    }
}
