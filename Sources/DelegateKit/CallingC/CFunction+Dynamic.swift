extension CFunction {
    /// Calls the function with values known only at run time, each converted to the C type the signature
    /// gives it, and returns the result as a run-time value (`.bytes([])` for `void`).
    ///
    /// A variadic function's further arguments need their C types, which a run-time value does not carry:
    /// give them in `variadicTypes`, as C passes them (`double`, not `float`; `int`, not `char`), one per
    /// argument after the named ones.
    ///
    /// ```swift
    /// let labs = try CFunction("labs", declaration: "long (long)")
    /// try labs.call([.signed(-7)])    // .signed(7)
    /// ```
    ///
    /// Throws ``DelegateError/callMismatch(function:declaration:call:reason:)`` for the wrong number of
    /// arguments, ``DelegateError/valueMismatch(function:argument:type:value:)`` for a value its type
    /// cannot hold, and ``DelegateError/variadicArgument(function:argument:type:reason:)`` for a variadic
    /// type C never passes.
    public func call(_ arguments: [CDynamicValue], variadicTypes: [CType] = []) throws -> CDynamicValue {
        let types = signature.argumentTypes + variadicTypes
        let named = signature.argumentTypes.count
        if arguments.count != types.count || (!isVariadic && !variadicTypes.isEmpty) {
            let passes = variadicTypes.isEmpty ? "" : " (\(variadicTypes.count) variadic)"
            throw DelegateError.callMismatch(
                function: name, declaration: declaration,
                call: CSignature(signature.returnType, arguments.enumerated().map { index, value in
                    index < types.count ? types[index] : value.naturalType
                }),
                reason: "it takes \(isVariadic ? "\(named) named arguments and the variadic ones" : "\(named)"), "
                    + "the call passes \(arguments.count)\(passes)")
        }
        for (offset, type) in variadicTypes.enumerated() {
            let promoted = type.promotedForVariadicCall
            if promoted != type || type == .void {
                throw DelegateError.variadicArgument(
                    function: name, argument: named + offset + 1, type: type,
                    reason: type == .void ? "void is not a value" : "C passes it as `\(promoted)`; state that type")
            }
            if let problem = type.problemAsValue() {
                throw DelegateError.invalidSignature(CSignature(signature.returnType, types), reason: "argument \(named + offset + 1) \(problem)")
            }
        }
        let prepared = try isVariadic ? preparedVariadic(types) : self.prepared.unsafelyUnwrapped
        let offsets = types.reduce(into: [0]) { offsets, type in offsets.append(offsets.last! + argumentSlotSize(type.size)) }
        return try withUnsafeTemporaryAllocation(byteCount: max(offsets.last!, 1), alignment: 16) { storage in
            try withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(types.count, 1)) { pointers in
                let base = storage.baseAddress.unsafelyUnwrapped
                for (index, value) in arguments.enumerated() {
                    let slot = base + offsets[index]
                    guard value.store(as: types[index], to: slot) else {
                        throw DelegateError.valueMismatch(function: name, argument: index + 1, type: types[index], value: value)
                    }
                    pointers[index] = slot
                }
                return withResultBuffer(prepared) { result in
                    prepared.call(address, result: result, arguments: pointers.baseAddress.unsafelyUnwrapped)
                    return CDynamicValue(UnsafeRawPointer(result), signature.returnType)
                }
            }
        }
    }
}

extension CDynamicValue {
    /// Writes the value at `address` as C type `type`; false when the type cannot hold it (an integer out
    /// of its range, a value of another kind, bytes of another size).
    func store(as type: CType, to address: UnsafeMutableRawPointer) -> Bool {
        func integer<T: FixedWidthInteger>(_: T.Type) -> Bool {
            let value: T?
            switch self {
            case .signed(let signed): value = T(exactly: signed)
            case .unsigned(let unsigned): value = T(exactly: unsigned)
            default: value = nil
            }
            guard let value else { return false }
            address.storeBytes(of: value, as: T.self)
            return true
        }
        switch (type, self) {
        case (.bool, .bool(let value)): address.storeBytes(of: value, as: Bool.self)
        case (.int8, _): return integer(Int8.self)
        case (.uint8, _): return integer(UInt8.self)
        case (.int16, _): return integer(Int16.self)
        case (.uint16, _): return integer(UInt16.self)
        case (.int32, _): return integer(Int32.self)
        case (.uint32, _): return integer(UInt32.self)
        case (.int64, _): return integer(Int64.self)
        case (.uint64, _), (.size, _): return integer(UInt64.self)
        case (.float, .floatingPoint(let value)): address.storeBytes(of: Float(value), as: Float.self)
        case (.double, .floatingPoint(let value)): address.storeBytes(of: value, as: Double.self)
        #if arch(x86_64)
        case (.longDouble, .floatingPoint(let value)): address.storeBytes(of: Float80(value), as: Float80.self)
        #endif
        case (.pointer, .pointer(let value)): address.storeBytes(of: value, as: UInt.self)
        case (.structure, .bytes(let bytes)) where bytes.count == type.size:
            address.copyMemory(from: bytes, byteCount: bytes.count)
        default: return false
        }
        return true
    }

    /// The C type a value of this kind most plainly has, for describing a call with too many arguments.
    var naturalType: CType {
        switch self {
        case .bool: return .bool
        case .signed: return .int64
        case .unsigned: return .uint64
        case .floatingPoint: return .double
        case .pointer: return .pointer
        case .bytes(let bytes): return .structure(Array(repeating: .uint8, count: max(bytes.count, 1)))
        }
    }
}
