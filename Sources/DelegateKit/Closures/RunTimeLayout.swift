/// How a call with run-time values (``CFunction/call(_:variadicTypes:)``) lays its arguments out for
/// libffi, worked out once per prepared signature: each argument's kind and the offset of its slot in one
/// block of stack memory, and the result's kind.
///
/// A call then converts each value with one switch over a kind that holds no reference. Working from the
/// signature's `CType`s instead copies an enum whose structure case holds an array (a retain and release
/// per copy) and builds arrays of types and offsets per call: most of what such a call cost.
struct RunTimeLayout {
    /// What a value is stored as: a `CType` with the structure's members reduced to its size.
    enum Kind: Equatable {
        case void, bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float, double, longDouble, pointer
        case complexFloat, complexDouble, complexLongDouble, int128, uint128
        case bytes(Int)

        init(_ type: CType) {
            switch type {
            case .void: self = .void
            case .bool: self = .bool
            case .int8: self = .int8
            case .uint8: self = .uint8
            case .int16: self = .int16
            case .uint16: self = .uint16
            case .int32: self = .int32
            case .uint32: self = .uint32
            case .int64: self = .int64
            case .uint64, .size: self = .uint64
            case .float: self = .float
            case .double: self = .double
            case .longDouble: self = .longDouble
            case .complexFloat: self = .complexFloat
            case .complexDouble: self = .complexDouble
            case .complexLongDouble: self = .complexLongDouble
            case .pointer: self = .pointer
            case .int128: self = .int128
            case .uint128: self = .uint128
            case .structure: self = .bytes(type.size)
            }
        }
    }

    struct Argument {
        let kind: Kind
        let offset: Int
    }

    /// One per argument; allocated once, freed by ``deallocate()`` (a buffer, not an array: reading a
    /// class's array property per call retains and releases it).
    let arguments: UnsafeMutableBufferPointer<Argument>
    /// The bytes of all argument slots, each 16-aligned and at least 8 bytes (libffi reads whole words).
    let byteCount: Int
    let result: Kind
    /// Whether a call is a direct call in registers (see ``RegisterPath``): every argument and the result
    /// is a scalar that travels in one, and the register path runs. For a variadic call the signature's
    /// further arguments are promoted types already.
    let takesRegisters: Bool

    init(_ signature: CSignature) {
        arguments = .allocate(capacity: signature.argumentTypes.count)
        var offset = 0
        for (index, type) in signature.argumentTypes.enumerated() {
            arguments.initializeElement(at: index, to: Argument(kind: Kind(type), offset: offset))
            offset += argumentSlotSize(type.size)
        }
        byteCount = max(offset, 1)
        result = Kind(signature.returnType)
        takesRegisters = RegisterPath.isAvailable && RegisterLayout(signature) != nil
    }

    func deallocate() { arguments.deallocate() }

    /// The integer register of a value of integer class `kind` stored at `slot`, extended to 64 bits as
    /// clang's callers extend it (a register call's kinds only).
    @inline(__always)
    static func integerRegister(_ kind: Kind, _ slot: UnsafeRawPointer) -> UInt64 {
        switch kind {
        case .bool, .uint8: return UInt64(slot.load(as: UInt8.self))
        case .int8: return UInt64(bitPattern: Int64(slot.load(as: Int8.self)))
        case .uint16: return UInt64(slot.load(as: UInt16.self))
        case .int16: return UInt64(bitPattern: Int64(slot.load(as: Int16.self)))
        case .uint32: return UInt64(slot.load(as: UInt32.self))
        case .int32: return UInt64(bitPattern: Int64(slot.load(as: Int32.self)))
        default: return slot.load(as: UInt64.self)
        }
    }
}
