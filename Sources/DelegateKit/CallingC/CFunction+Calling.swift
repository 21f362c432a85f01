
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
    /// caller do): the form for a function that returns `void`, `try free.call(pointer)`.
    @inlinable
    public func call<each A: CValue>(_ argument: repeat each A) throws {
        _ = try perform(repeat each argument, returning: CVoid.self, checkingResult: false)
    }

    @inlinable
    func perform<each A: CValue, R: CValue>(
        _ argument: repeat each A, returning: R.Type, checkingResult: Bool
    ) throws -> R {
        guard let libffiCall, !isVariadic else {
            return try callVariadic(repeat each argument, returning: R.self, checkingResult: checkingResult)
        }
        // Types that passed the full check before skip it (a load and a test for a function no call of
        // other types reached: the common case). Otherwise one comparison per scalar once specialized;
        // anything else (a struct, an `Int` for `size_t`, a mistake) takes the full check, which throws
        // when the call does not fit, and is recorded when it does: its answer depends on the types alone.
        if !checkedCalls.contains(R.self, checkingResult: checkingResult, repeat (each A).self) {
            var fits = !checkingResult || (R.cType.scalarCode.map { $0 == returnCode } ?? false)
            var index = 0
            for value in repeat each argument {
                let code = staticType(of: value).cType.scalarCode
                fits = fits && index < argumentCodes.count && code == argumentCodes[index]
                index += 1
            }
            if !fits || index != argumentCodes.count {
                try check(repeat each argument, returning: R.self, checkingResult: checkingResult)
                checkedCalls.insert(R.self, checkingResult: checkingResult, repeat (each A).self)
            }
        }
        if callsInRegisters {
            // Each value goes to the register its Swift type says; only when that is the register its C
            // type says do the signature's register counts bound how many there are.
            var agrees = !checkingResult || registerClassAgrees(R.self, signature.returnType)
            for value in repeat each argument { agrees = agrees && registerClassAgrees(staticType(of: value), staticType(of: value).cType) }
            if agrees {
                var registers = ArgumentRegisters()
                for value in repeat each argument { registers.append(value) }
                if registers.fits { return resultValue(registers.call(address), as: R.self) }
            }
        }
        let function = address
        return withArgumentArray(repeat each argument) { arguments in
            libffiCall.call(function, arguments: arguments, returning: R.self)
        }
    }

    /// Whether `T`'s C type is the scalar the signature has at argument `index` (the fixed-arity calls'
    /// quick check, a constant comparison once specialized; `index` is in range).
    @inlinable @inline(__always)
    func matches<T: CValue>(_ type: T.Type, at index: Int) -> Bool {
        guard let code = T.cType.scalarCode else { return false }
        return argumentCodes[index] == code
    }

    /// Whether `T`'s C type is the scalar the function returns.
    @inlinable @inline(__always)
    func returns<T: CValue>(_ type: T.Type) -> Bool {
        guard let code = T.cType.scalarCode else { return false }
        return returnCode == code
    }

    /// Throws ``DelegateError/callMismatch(function:declaration:call:reason:)`` unless arguments of types
    /// `A` and a result of type `R` fit the signature (``layoutMismatch`` for a type whose stated C type
    /// is not its layout).
    @usableFromInline
    func check<each A: CValue, R: CValue>(_ argument: repeat each A, returning: R.Type, checkingResult: Bool) throws {
        var types: [CType] = []
        var swiftTypes: [Any.Type] = []
        for value in repeat each argument {
            let type = staticType(of: value)
            types.append(try type.checkedCType())
            swiftTypes.append(type)
        }
        let result = checkingResult ? try R.checkedCType() : signature.returnType
        if let reason = mismatch(arguments: types, result: result, swiftTypes: swiftTypes, resultType: R.self) {
            throw DelegateError.callMismatch(
                function: name, declaration: declaration, call: CSignature(result, types), reason: reason)
        }
    }

    /// Why arguments of C types `types` and a result of `result` do not fit the signature, or nil.
    /// The arguments' Swift types and the result's, when known, explain an imported C enum.
    func mismatch(arguments types: [CType], result: CType, swiftTypes: [Any.Type] = [], resultType: Any.Type? = nil) -> String? {
        let named = signature.argumentTypes.count
        if isVariadic ? types.count < named : types.count != named {
            let takes = "it takes \(isVariadic ? "at least " : "")\(named) \(named == 1 ? "argument" : "arguments")"
            return "\(takes), the call passes \(types.count)"
        }
        for (index, expected) in signature.argumentTypes.enumerated() where !expected.accepts(types[index]) {
            let hint = swiftTypes.indices.contains(index) ? enumHint(swiftTypes[index], types[index], expected) : ""
            return "argument \(index + 1) is `\(types[index])`, where the function takes `\(expected)`\(hint)"
        }
        if !signature.returnType.accepts(result) {
            let hint = resultType.map { enumHint($0, result, signature.returnType) } ?? ""
            return "the result is asked for as `\(result)`, but the function returns `\(signature.returnType)`\(hint)"
        }
        return nil
    }

    /// Calls a variadic function: the named arguments as the signature says, the others promoted, with a
    /// prepared call interface per distinct list of types, made once, then found by a key computed from the
    /// types alone (no lock, no allocation).
    @inlinable
    func callVariadic<each A: CValue, R: CValue>(
        _ argument: repeat each A, returning: R.Type, checkingResult: Bool
    ) throws -> R {
        let named = argumentCodes.count
        var fits = !checkingResult || returns(R.self)
        var key = variadicKeyPrefix
        var count = 0
        for value in repeat each argument {
            if count < named {
                fits = fits && staticType(of: value).cType.scalarCode == argumentCodes[count]
            } else {
                key = appendingVariadicKey(staticType(of: value), key)
            }
            count += 1
        }
        if !fits || count < named {
            try check(repeat each argument, returning: R.self, checkingResult: checkingResult)
        }
        if variadicCallsInRegisters {
            // As a typed call of a function that is not variadic, with the further arguments promoted.
            var agrees = !checkingResult || registerClassAgrees(R.self, signature.returnType)
            var registers = ArgumentRegisters()
            var index = 0
            for value in repeat each argument {
                let type = staticType(of: value)
                if index < named {
                    agrees = agrees && registerClassAgrees(type, type.cType)
                    registers.append(value)
                } else {
                    agrees = agrees && registerClassAgrees(type, type.cType.promotedForVariadicCall)
                    registers.appendPromoted(value)
                }
                index += 1
            }
            if agrees && registers.fits { return resultValue(registers.callVariadic(address), as: R.self) }
        }
        let call = try key.flatMap(PreparedSignature.lookupCall) ?? preparedVariadic(repeat each argument).libffiCall
        let function = address
        return withArgumentSlots(promotingFrom: named, repeat each argument) { arguments in
            call.call(function, arguments: arguments, returning: R.self)
        }
    }

    /// The prepared call for these arguments, made (or found the slow way) on a call whose key is not known yet.
    @usableFromInline
    func preparedVariadic<each A: CValue>(_ argument: repeat each A) throws -> PreparedSignature {
        var types = signature.argumentTypes
        var count = 0
        for value in repeat each argument {
            if count >= types.count { types.append(staticType(of: value).cType.promotedForVariadicCall) }
            count += 1
        }
        return try preparedVariadic(types)
    }

    /// The prepared call of this variadic function with arguments of `types` (named ones first).
    func preparedVariadic(_ types: [CType]) throws -> PreparedSignature {
        let named = signature.argumentTypes.count
        return try PreparedSignature.prepared(key: variadicKey(types[named...]), fixedArgumentCount: named) {
            CSignature(signature.returnType, types)
        }
    }

    /// The key of this variadic function's prepared call with further arguments of C types `types` (as
    /// C passes them), or nil when a type rules keys out (see ``PreparedSignature``).
    func variadicKey<Types: Sequence<CType>>(_ types: Types) -> UInt64? {
        var key = variadicKeyPrefix
        for type in types { key = type.appendingKey(key) }
        return key
    }
}

/// libffi's argument array for `argument`s, each in 16-aligned storage of at least 8 bytes of its own,
/// those from `promotingFrom` on promoted in place as C's default argument promotions say.
@inlinable
func withArgumentSlots<each A: CValue, T>(
    promotingFrom named: Int, _ argument: repeat each A, body: (UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> T
) -> T {
    var count = 0
    var bytes = 0
    for value in repeat each argument {
        bytes += argumentSlotSize(MemoryLayout.size(ofValue: value))
        count += 1
    }
    return withUnsafeTemporaryAllocation(byteCount: max(bytes, 1), alignment: 16) { storage in
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(count, 1)) { pointers in
            var slot = storage.baseAddress.unsafelyUnwrapped
            var index = 0
            for value in repeat each argument {
                storeArgument(value, to: slot, promoted: index >= named)
                pointers[index] = slot
                slot += argumentSlotSize(MemoryLayout.size(ofValue: value))
                index += 1
            }
            return body(pointers.baseAddress.unsafelyUnwrapped)
        }
    }
}

/// `key` with a `T` passed past a variadic function's named arguments (as C promotes it) appended.
@inlinable @inline(__always)
func appendingVariadicKey<T: CValue>(_: T.Type, _ key: UInt64?) -> UInt64? {
    T.cType.promotedForVariadicCall.appendingKey(key)
}

/// Stores an argument in its slot; `promoted` past a variadic function's named arguments.
@inlinable @inline(__always)
func storeArgument<T: CValue>(_ value: T, to slot: UnsafeMutableRawPointer, promoted: Bool) {
    if promoted {
        storePromoted(value, to: slot)
    } else {
        slot.storeBytes(of: value, as: T.self)
    }
}

/// Stores `value` at `address` as C's default argument promotions pass it (see
/// ``CType/promotedForVariadicCall``): its slot has room for the wider value.
@inlinable @inline(__always)
func storePromoted<T: CValue>(_ value: T, to address: UnsafeMutableRawPointer) {
    address.storeBytes(of: value, as: T.self)
    func widen<I: BinaryInteger>(_: I.Type) { address.storeBytes(of: Int32(address.load(as: I.self)), as: Int32.self) }
    switch T.cType {
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
    @inlinable
    var promotedForVariadicCall: CType {
        switch self {
        case .float: return .double
        case .bool, .int8, .uint8, .int16, .uint16: return .int32
        default: return self
        }
    }
}

/// What to write when a C enum Swift imported meets the other signedness of its width: C gives an enum
/// with no negative constant the type `unsigned int`, so Swift imports `CURLcode` with a `UInt32` raw
/// value, where a declaration (or a `typedefs:` entry) that says `int` makes it `int32_t`.
func enumHint(_ swiftType: Any.Type, _ actual: CType, _ declared: CType) -> String {
    guard swiftType is any RawRepresentable.Type else { return "" }
    let spelled: String
    switch (actual, declared) {
    case (.uint8, .int8): spelled = ".uint8"
    case (.uint16, .int16): spelled = ".uint16"
    case (.uint32, .int32): spelled = ".uint32"
    default: return ""
    }
    let name = String(describing: swiftType)
    return "; `\(name)` is a C enum Swift imports as `\(actual)` (C gives an enum with no negative constant an unsigned "
        + "type); declare it `\(actual)` (in `typedefs:`, `\"\(name)\": \(spelled)`), or pass its raw value converted"
}
