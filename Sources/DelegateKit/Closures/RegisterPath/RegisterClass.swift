/// Whether a Swift type's values travel in SSE registers: decided by the type itself, so that it folds
/// to a constant in specialized code. Register bodies are only made when this agrees with the C type
/// each argument states (see ``registerClassesAgree(_:_:)``).
@inlinable @inline(__always)
func travelsInSSE<T>(_ type: T.Type) -> Bool {
    T.self == Double.self || T.self == Float.self
}

/// Whether `T`'s stated C type is a scalar of the register class ``travelsInSSE(_:)`` gives `T`: the
/// condition for converting `T` from and to registers by type alone.
@inlinable
func registerClassAgrees<T: CValue>(_ type: T.Type, _ cType: CType) -> Bool {
    switch cType {
    case .float, .double: return travelsInSSE(T.self)
    case .bool, .int8, .uint8, .int16, .uint16, .int32, .uint32, .int64, .uint64, .size, .pointer:
        return !travelsInSSE(T.self) && MemoryLayout<T>.size <= 8
    case .void: return true
    case .longDouble, .int128, .uint128, .complexFloat, .complexDouble, .complexLongDouble, .structure: return false
    }
}

/// Whether every Swift type of a closure travels in the register class its C type in `signature` does,
/// the condition for converting arguments and result by Swift type alone (as a direct entry does).
@inlinable
func registerClassesAgree<each A: CValue, R: CValue>(
    _ signature: CSignature, _ result: R.Type, _ arguments: repeat (each A).Type
) -> Bool {
    var agrees = registerClassAgrees(R.self, signature.returnType)
    var index = 0
    for argument in repeat each arguments {
        agrees = agrees && registerClassAgrees(argument, signature.argumentTypes[index])
        index += 1
    }
    return agrees
}

/// `value` as the result registers of a call, a narrow integer widened as libffi widens it. The widening
/// comes from `T`'s C type, a constant once specialized where `T`'s conformance is visible (a closure's
/// register form is specialized in the module that makes it): a widening read at run time was a load and
/// a jump through a table on every call.
@inlinable @inline(__always)
func registerResult<T: CValue>(_ value: T) -> RegisterResult {
    if T.self == CVoid.self { return .zero }
    if travelsInSSE(T.self) { return RegisterResult(integer: 0, sse: sseBits(of: value)) }
    var bits = integerBits(of: value)
    if MemoryLayout<T>.size < 8 { bits = T.cType.widening.widen(bits) }
    return RegisterResult(integer: bits, sse: 0)
}

/// The value of type `T` a C function returned in `result`.
@inlinable @inline(__always)
func resultValue<T>(_ result: RegisterResult, as type: T.Type = T.self) -> T {
    if travelsInSSE(T.self) { return sseValue(of: result.sse) }
    return integerValue(of: result.integer)
}

// Conversions between a register and a value of a type that travels in it, by bit casts of the value's
// own width: they never take an address, so the specialized code keeps everything in registers and
// carries no stack protector. Each switch folds to one case where `T` is known. A narrow value is the
// register's low bits (little-endian), as C puts it there; what lies above is not read.

/// The value of type `T` (at most 8 bytes, of the integer class, or empty) in the low bits of `register`.
@inlinable @inline(__always)
func integerValue<T>(of register: UInt64) -> T {
    switch MemoryLayout<T>.size {
    case 0: return unsafeBitCast((), to: T.self)  // a result that is discarded or `void`
    case 1: return unsafeBitCast(UInt8(truncatingIfNeeded: register), to: T.self)
    case 2: return unsafeBitCast(UInt16(truncatingIfNeeded: register), to: T.self)
    case 4: return unsafeBitCast(UInt32(truncatingIfNeeded: register), to: T.self)
    default: return unsafeBitCast(register, to: T.self)
    }
}

/// `value` (at most 8 bytes, of the integer class) in the low bits of a register, the rest zero.
@inlinable @inline(__always)
func integerBits<T>(of value: T) -> UInt64 {
    switch MemoryLayout<T>.size {
    case 0: return 0
    case 1: return UInt64(unsafeBitCast(value, to: UInt8.self))
    case 2: return UInt64(unsafeBitCast(value, to: UInt16.self))
    case 4: return UInt64(unsafeBitCast(value, to: UInt32.self))
    default: return unsafeBitCast(value, to: UInt64.self)
    }
}

/// The `Double` or `Float` in `register` (a `Float` is its low 32 bits).
@inlinable @inline(__always)
func sseValue<T>(of register: Double) -> T {
    if MemoryLayout<T>.size == 4 { return unsafeBitCast(UInt32(truncatingIfNeeded: register.bitPattern), to: T.self) }
    return unsafeBitCast(register, to: T.self)
}

/// `value`, a `Double` or a `Float`, as an SSE register (a `Float` in its low 32 bits, the rest zero).
@inlinable @inline(__always)
func sseBits<T>(of value: T) -> Double {
    if MemoryLayout<T>.size == 4 { return Double(bitPattern: UInt64(unsafeBitCast(value, to: UInt32.self))) }
    return unsafeBitCast(value, to: Double.self)
}

extension ReturnWidening {
    /// The register value libffi would make of a narrow integer result held in the low bits of `bits`.
    @inlinable @inline(__always)
    func widen(_ bits: UInt64) -> UInt64 {
        switch self {
        case .none: return bits
        case .signExtend8: return UInt64(bitPattern: Int64(Int8(truncatingIfNeeded: bits)))
        case .signExtend16: return UInt64(bitPattern: Int64(Int16(truncatingIfNeeded: bits)))
        case .signExtend32: return UInt64(bitPattern: Int64(Int32(truncatingIfNeeded: bits)))
        case .zeroExtend8: return UInt64(UInt8(truncatingIfNeeded: bits))
        case .zeroExtend16: return UInt64(UInt16(truncatingIfNeeded: bits))
        case .zeroExtend32: return UInt64(UInt32(truncatingIfNeeded: bits))
        }
    }
}
