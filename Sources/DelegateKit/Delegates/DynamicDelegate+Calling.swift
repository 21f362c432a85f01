extension DynamicDelegate {
    /// What C would call for `method` right now, as a Swift function of the given type, or nil when its
    /// slot is NULL. The function keeps the delegate alive.
    ///
    /// ```swift
    /// let transform = try delegate.implementation(for: "transform", as: ((UnsafeMutableRawPointer?, Int64) -> Int64).self)
    /// ```
    ///
    /// `R` is a ``CValue``, or `Void` for a `void` method.
    ///
    /// - Throws: ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` when `type` does not
    ///   have the method's C signature;
    ///   ``DelegateError/functionTypeMismatch(call:signature:requested:reason:)`` when `R` is neither.
    @inlinable
    public func implementation<each A: CValue, R>(
        for method: String, as type: ((repeat each A) -> R).Type
    ) throws -> ((repeat each A) -> R)? {
        if let result = ResultCheck.cValue(R.self) {
            return try implementation(for: method, returning: result, as: type)
        }
        guard R.self == Void.self else {
            throw try resultNotCType(method, requested: String(reflecting: type), result: String(reflecting: R.self))
        }
        let signature = try CSignature.of(CVoid.self, repeat (each A).self)
        guard let slot = try currentSlot(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) -> R in
            let _: CVoid = slot.call(repeat each argument)
            return () as! R
        }
    }

    /// The form above for a result type `R` found to be the ``CValue`` `Returned`.
    @inlinable
    func implementation<each A: CValue, R, Returned: CValue>(
        for method: String, returning: Returned.Type, as type: ((repeat each A) -> R).Type
    ) throws -> ((repeat each A) -> R)? {
        let signature = try CSignature.of(Returned.self, repeat (each A).self)
        guard let slot = try currentSlot(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) -> R in
            let result: Returned = slot.call(repeat each argument)
            return result as! R
        }
    }

    @usableFromInline
    func resultNotCType(_ method: String, requested: String, result: String) throws -> DelegateError {
        let index = try descriptor.methodIndex(of: method)
        return DelegateError.functionTypeMismatch(
            call: "DynamicDelegate.implementation(for: \"\(method)\", as:)", signature: descriptor.methods[index].signature,
            requested: requested, reason: "its result `\(result)` is not a C type: use a CValue, or Void for a `void` method")
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
