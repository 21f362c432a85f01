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
    @inlinable
    public func call(_ arguments: [CDynamicValue], variadicTypes: [CType] = []) throws -> CDynamicValue {
        // Inlined, so that an array literal of arguments, which goes nowhere else, can live on the stack.
        try arguments.withUnsafeBufferPointer { try call(values: $0, variadicTypes: variadicTypes) }
    }

    @usableFromInline
    func call(values arguments: UnsafeBufferPointer<CDynamicValue>, variadicTypes: [CType]) throws -> CDynamicValue {
        let (call, layout) = try preparedForRunTimeCall(arguments, variadicTypes: variadicTypes)
        if layout.takesRegisters { return try callInRegisters(arguments, layout, variadicTypes: variadicTypes) }
        let function = address
        return try withRunTimeArguments(arguments, call, layout, variadicTypes: variadicTypes) { call, layout, _, pointers in
            withResultBuffer(byteCount: call.resultBufferSize) { result in
                LibffiShim.call(call.cif, function, result, pointers)
                return CDynamicValue(UnsafeRawPointer(result), layout.result)
            }
        }
    }

    /// The call of a signature that takes registers only: each value converted to its C type as libffi's
    /// call would store it, then passed in the next register of its class, as a typed call passes it.
    private func callInRegisters(
        _ arguments: UnsafeBufferPointer<CDynamicValue>, _ layout: RunTimeLayout, variadicTypes: [CType]
    ) throws -> CDynamicValue {
        // 5 integer registers, then 8 vector ones (`ArgumentRegisters`' block); the layout's counts fit.
        var block: (ArgumentRegisters.Integers, ArgumentRegisters.SSE) = ((0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0, 0, 0))
        var word: UInt64 = 0  // every kind of such a call fits
        var vectors = 0
        let unfit: Int? = withUnsafeMutableBytes(of: &block) { block in
            let registers = block.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt64.self)
            var integers = 0
            return withUnsafeMutableBytes(of: &word) { word in
                let slot = word.baseAddress.unsafelyUnwrapped
                for index in 0..<layout.arguments.count {
                    let kind = layout.arguments[index].kind
                    guard arguments[index].store(kind, to: slot) else { return index }
                    switch kind {
                    case .float: registers[5 + vectors] = UInt64(slot.load(as: UInt32.self)); vectors += 1
                    case .double: registers[5 + vectors] = slot.load(as: UInt64.self); vectors += 1
                    default: registers[integers] = RunTimeLayout.integerRegister(kind, slot); integers += 1
                    }
                }
                return nil
            }
        }
        if let unfit { throw valueMismatch(arguments, at: unfit, variadicTypes: variadicTypes) }
        var registers = ArgumentRegisters(block.0, block.1)
        registers.sseTaken = vectors
        let result = isVariadic ? registers.callVariadic(address) : registers.call(address)
        word = layout.result == .float || layout.result == .double ? result.sse.bitPattern : result.integer
        return withUnsafeBytes(of: &word) { CDynamicValue($0.baseAddress.unsafelyUnwrapped, layout.result) }
    }

    /// The error of a run-time `arguments[index]` its C type cannot hold.
    private func valueMismatch(_ arguments: UnsafeBufferPointer<CDynamicValue>, at index: Int, variadicTypes: [CType]) -> DelegateError {
        DelegateError.valueMismatch(
            function: name, argument: index + 1, type: (signature.argumentTypes + variadicTypes)[index],
            value: arguments[index].description)
    }

    /// Runs `body` with `arguments` converted to the C types of a call of this function, in libffi's form:
    /// the prepared call (valid for ever), its layout, the block of ``RunTimeLayout/byteCount`` bytes the
    /// values are stored in, and the argument array pointing into it (both valid during `body`). Throws as
    /// ``call(_:variadicTypes:)`` does.
    func withRunTimeArguments<T>(
        _ arguments: UnsafeBufferPointer<CDynamicValue>, variadicTypes: [CType],
        _ body: (LibffiCall, RunTimeLayout, UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> T
    ) throws -> T {
        let (call, layout) = try preparedForRunTimeCall(arguments, variadicTypes: variadicTypes)
        return try withRunTimeArguments(arguments, call, layout, variadicTypes: variadicTypes, body)
    }

    /// ``withRunTimeArguments(_:variadicTypes:_:)`` for the prepared call and layout already found.
    private func withRunTimeArguments<T>(
        _ arguments: UnsafeBufferPointer<CDynamicValue>, _ call: LibffiCall, _ layout: RunTimeLayout, variadicTypes: [CType],
        _ body: (LibffiCall, RunTimeLayout, UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> T
    ) throws -> T {
        let count = layout.arguments.count
        // Only values inside the closures, so that they capture nothing reference counted.
        var unfit = -1
        let result: T? = withUnsafeTemporaryAllocation(byteCount: layout.byteCount, alignment: 16) { storage in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(count, 1)) { pointers in
                let base = storage.baseAddress.unsafelyUnwrapped
                for index in 0..<count where unfit < 0 {
                    let argument = layout.arguments[index]
                    let slot = base + argument.offset
                    if !arguments[index].store(argument.kind, to: slot) { unfit = index }
                    pointers[index] = slot
                }
                if unfit >= 0 { return nil }
                return body(call, layout, base, pointers.baseAddress.unsafelyUnwrapped)
            }
        }
        guard let result else { throw valueMismatch(arguments, at: unfit, variadicTypes: variadicTypes) }
        return result
    }

    /// The prepared call for run-time `arguments`: the function's own, or for a variadic one, the one for
    /// these `variadicTypes`, found by a key made of the types alone when a call had them before (the
    /// types were checked then); as values, valid for ever (prepared signatures are kept). Throws for a
    /// wrong count, or variadic types C never passes.
    @inline(__always)
    private func preparedForRunTimeCall(_ arguments: UnsafeBufferPointer<CDynamicValue>, variadicTypes: [CType]) throws -> (LibffiCall, RunTimeLayout) {
        // Inlined, so that a call that finds its prepared call returns nothing through memory; the rest,
        // a call's first with these types or a wrong one, is out of line.
        if arguments.count == argumentCodes.count + variadicTypes.count {
            if !isVariadic {
                if variadicTypes.isEmpty, let libffiCall, let runTimeLayout { return (libffiCall, runTimeLayout) }
            } else if let key = variadicKey(variadicTypes), let found = PreparedSignature.lookupUnretained(key) {
                return found._withUnsafeGuaranteedRef { ($0.libffiCall, $0.runTimeLayout) }
            }
        }
        return try preparingRunTimeCall(arguments, variadicTypes: variadicTypes)
    }

    /// ``preparedForRunTimeCall(_:variadicTypes:)`` for a call with types no call had before: checks the
    /// count and the variadic types, and prepares the call.
    private func preparingRunTimeCall(_ arguments: UnsafeBufferPointer<CDynamicValue>, variadicTypes: [CType]) throws -> (LibffiCall, RunTimeLayout) {
        let named = argumentCodes.count
        let types = signature.argumentTypes + variadicTypes
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
        let prepared = try preparedVariadic(types)
        return (prepared.libffiCall, prepared.runTimeLayout)
    }
}

extension CDynamicValue {
    /// The C type a value of this kind most plainly has, for describing a call with too many arguments.
    var naturalType: CType {
        switch self {
        case .bool: return .bool
        case .signed: return .int64
        case .unsigned: return .uint64
        case .floatingPoint: return .double
        #if arch(x86_64)
        case .longDouble: return .longDouble
        #endif
        case .complex: return .complexDouble
        case .pointer: return .pointer
        case .bytes(let bytes): return .structure(Array(repeating: .uint8, count: max(bytes.count, 1)))
        case .closure: return .pointer
        }
    }
}
