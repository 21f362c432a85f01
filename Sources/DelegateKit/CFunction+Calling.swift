import CFFIShim

extension CFunction {
    /// Calls the function with `argument`s of ``CValue`` types and returns its result as an `R`.
    ///
    /// Each named argument's C type must be the signature's there (``CType/accepts(_:)``: an `Int` may
    /// fill a `size_t`), and `R`'s the return type; further arguments of a variadic function take C's
    /// default argument promotions (see ``CFunction``). Throws
    /// ``DelegateError/callMismatch(function:declaration:call:reason:)`` naming both signatures when
    /// they do not fit, before anything is called.
    @inlinable
    public func call<each A: CValue, R: CValue>(_ argument: repeat each A, returning: R.Type = R.self) throws -> R {
        try perform(repeat each argument, returning: R.self, checkingResult: true)
    }

    /// Calls the function with `argument`s of ``CValue`` types, ignoring what it returns (as C lets a
    /// caller do).
    @inlinable
    public func call<each A: CValue>(_ argument: repeat each A) throws {
        _ = try perform(repeat each argument, returning: CVoid.self, checkingResult: false)
    }

    @inlinable
    func perform<each A: CValue, R: CValue>(
        _ argument: repeat each A, returning: R.Type, checkingResult: Bool
    ) throws -> R {
        guard let prepared, !isVariadic else {
            return try callVariadic(repeat each argument, returning: R.self, checkingResult: checkingResult)
        }
        // One comparison per scalar once specialized; anything else (a struct, an `Int` for `size_t`, a
        // mistake) takes the full check, which throws when the call does not fit.
        var fits = !checkingResult || (R.cType.scalarCode.map { $0 == layout.returnCode } ?? false)
        var index = 0
        for value in repeat each argument {
            let code = type(of: value).cType.scalarCode
            fits = fits && index < layout.argumentCodes.count && code == layout.argumentCodes[index]
            index += 1
        }
        if !fits || index != layout.argumentCodes.count {
            try check(repeat each argument, returning: R.self, checkingResult: checkingResult)
        }
        if prepared.takesRegisters {
            var registers = ArgumentRegisters()
            var agrees = !checkingResult || registerClassAgrees(R.self, signature.returnType)
            for value in repeat each argument {
                agrees = agrees && registerClassAgrees(type(of: value), type(of: value).cType)
                registers.append(value)
            }
            if agrees && registers.fits { return resultValue(registers.call(address), as: R.self) }
        }
        return withArgumentArray(repeat each argument) { arguments in
            withResultBuffer(prepared, returning: R.self) { result in
                prepared.call(address, result: result, arguments: arguments)
            }
        }
    }

    /// Throws ``DelegateError/callMismatch(function:declaration:call:reason:)`` unless arguments of types
    /// `A` and a result of type `R` fit the signature (``layoutMismatch`` for a type whose stated C type
    /// is not its layout).
    @usableFromInline
    func check<each A: CValue, R: CValue>(_ argument: repeat each A, returning: R.Type, checkingResult: Bool) throws {
        var types: [CType] = []
        for value in repeat each argument { types.append(try type(of: value).checkedCType()) }
        let result = checkingResult ? try R.checkedCType() : signature.returnType
        if let reason = mismatch(arguments: types, result: result) {
            throw DelegateError.callMismatch(
                function: name, declaration: declaration, call: CSignature(result, types), reason: reason)
        }
    }

    /// Why arguments of C types `types` and a result of `result` do not fit the signature, or nil.
    func mismatch(arguments types: [CType], result: CType) -> String? {
        let named = signature.argumentTypes.count
        if isVariadic ? types.count < named : types.count != named {
            let takes = "it takes \(isVariadic ? "at least " : "")\(named) \(named == 1 ? "argument" : "arguments")"
            return "\(takes), the call passes \(types.count)"
        }
        for (index, expected) in signature.argumentTypes.enumerated() where !expected.accepts(types[index]) {
            return "argument \(index + 1) is `\(types[index])`, where the function takes `\(expected)`"
        }
        if !signature.returnType.accepts(result) {
            return "the result is asked for as `\(result)`, but the function returns `\(signature.returnType)`"
        }
        return nil
    }

    /// Calls a variadic function: the named arguments as the signature says, the others promoted, with a
    /// prepared call interface per distinct list of types (made once, then found without a lock).
    @usableFromInline
    func callVariadic<each A: CValue, R: CValue>(
        _ argument: repeat each A, returning: R.Type, checkingResult: Bool
    ) throws -> R {
        try check(repeat each argument, returning: R.self, checkingResult: checkingResult)
        var types = signature.argumentTypes
        var given: [CType] = []
        for value in repeat each argument {
            let type = type(of: value).cType
            if given.count >= types.count { types.append(type.promotedForVariadicCall) }
            given.append(type)
        }
        let prepared = try preparedVariadic(types)
        return withArgumentSlots(repeat each argument) { arguments in
            for position in signature.argumentTypes.count..<types.count {
                promote(arguments[position].unsafelyUnwrapped, from: given[position])
            }
            return withResultBuffer(prepared, returning: R.self) { result in
                prepared.call(address, result: result, arguments: arguments)
            }
        }
    }

    /// The prepared call of this variadic function with arguments of `types` (named ones first).
    func preparedVariadic(_ types: [CType]) throws -> FFISignature {
        let named = signature.argumentTypes.count
        var key = signature.returnType.appendingKey(0)
        for type in types[..<named] { key = type.appendingKey(key) }
        // A 0 between the named types and the others: no other key has one (see FFISignature).
        key = key.flatMap { $0 >> 60 == 0 ? $0 << 4 : nil }
        for type in types[named...] { key = type.appendingKey(key) }
        return try FFISignature.prepared(key: key, fixedArgumentCount: named) {
            CSignature(signature.returnType, types)
        }
    }
}

/// Runs `body` with a zeroed buffer libffi may write a result of `prepared` into, then reads it as `R`.
@inlinable
func withResultBuffer<R: CValue>(_ prepared: FFISignature, returning: R.Type, _ body: (UnsafeMutableRawPointer) -> Void) -> R {
    withUnsafeTemporaryAllocation(byteCount: max(prepared.resultBufferSize, MemoryLayout<R>.size), alignment: 16) {
        let result = $0.baseAddress.unsafelyUnwrapped
        result.initializeMemory(as: UInt8.self, repeating: 0, count: $0.count)
        body(result)
        // libffi writes a narrow integer as a whole register; on a little-endian machine its low bytes,
        // the value itself, come first.
        return UnsafeRawPointer(result).loadUnaligned(as: R.self)
    }
}

/// libffi's argument array for `argument`s, each in 16-aligned storage of at least 8 bytes of its own,
/// so that a variadic one can be promoted in place.
@usableFromInline
func withArgumentSlots<each A: CValue, T>(
    _ argument: repeat each A, body: (UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> T
) -> T {
    var count = 0
    var bytes = 0
    for value in repeat each argument {
        bytes += slotSize(MemoryLayout.size(ofValue: value))
        count += 1
    }
    return withUnsafeTemporaryAllocation(byteCount: max(bytes, 1), alignment: 16) { storage in
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(count, 1)) { pointers in
            var slot = storage.baseAddress.unsafelyUnwrapped
            var index = 0
            for value in repeat each argument {
                slot.storeBytes(of: value, as: type(of: value))
                pointers[index] = slot
                slot += slotSize(MemoryLayout.size(ofValue: value))
                index += 1
            }
            return body(pointers.baseAddress.unsafelyUnwrapped)
        }
    }
}

private func slotSize(_ size: Int) -> Int { (max(size, 8) + 15) / 16 * 16 }

/// Converts the value at `address`, of C type `type`, to what C's default argument promotions make of
/// it (see ``CType/promotedForVariadicCall``), in place: its slot has room for the wider value.
func promote(_ address: UnsafeMutableRawPointer, from type: CType) {
    func widen<T: BinaryInteger>(_: T.Type) { address.storeBytes(of: Int32(address.load(as: T.self)), as: Int32.self) }
    switch type {
    case .float: address.storeBytes(of: Double(address.load(as: Float.self)), as: Double.self)
    case .bool: address.storeBytes(of: address.load(as: Bool.self) ? 1 : 0, as: Int32.self)
    case .int8: widen(Int8.self)
    case .uint8: widen(UInt8.self)
    case .int16: widen(Int16.self)
    case .uint16: widen(UInt16.self)
    default: break
    }
}

extension CType {
    /// The type C passes a variadic argument of this type as: `double` for `float`, `int` for `bool` and
    /// integers narrower than `int`, the type itself otherwise.
    var promotedForVariadicCall: CType {
        switch self {
        case .float: return .double
        case .bool, .int8, .uint8, .int16, .uint16: return .int32
        default: return self
        }
    }
}
