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
            case .pointer: self = .pointer
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

    init(_ signature: CSignature) {
        arguments = .allocate(capacity: signature.argumentTypes.count)
        var offset = 0
        for (index, type) in signature.argumentTypes.enumerated() {
            arguments.initializeElement(at: index, to: Argument(kind: Kind(type), offset: offset))
            offset += argumentSlotSize(type.size)
        }
        byteCount = max(offset, 1)
        result = Kind(signature.returnType)
    }

    func deallocate() { arguments.deallocate() }
}

extension CDynamicValue {
    /// Writes the value at `address` as `kind`; false when the kind cannot hold it (an integer out of its
    /// range, a value of another kind, bytes of another size).
    @inline(__always)
    func store(_ kind: RunTimeLayout.Kind, to address: UnsafeMutableRawPointer) -> Bool {
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
        switch (kind, self) {
        case (.int64, .signed(let value)): address.storeBytes(of: value, as: Int64.self)
        case (.bool, .bool(let value)): address.storeBytes(of: value, as: Bool.self)
        case (.int8, _): return integer(Int8.self)
        case (.uint8, _): return integer(UInt8.self)
        case (.int16, _): return integer(Int16.self)
        case (.uint16, _): return integer(UInt16.self)
        case (.int32, _): return integer(Int32.self)
        case (.uint32, _): return integer(UInt32.self)
        case (.int64, _): return integer(Int64.self)
        case (.uint64, _): return integer(UInt64.self)
        case (.float, .floatingPoint(let value)): address.storeBytes(of: Float(value), as: Float.self)
        case (.double, .floatingPoint(let value)): address.storeBytes(of: value, as: Double.self)
        #if arch(x86_64)
        case (.longDouble, .longDouble(let value)): address.storeBytes(of: value, as: Float80.self)
        case (.longDouble, .floatingPoint(let value)): address.storeBytes(of: Float80(value), as: Float80.self)
        #endif
        case (.longDouble, .bytes(let bytes)) where bytes.count == CType.longDouble.size:
            address.copyMemory(from: bytes, byteCount: bytes.count)
        case (.pointer, .pointer(let value)): address.storeBytes(of: value, as: UInt.self)
        case (.pointer, .closure(let closure)): address.storeBytes(of: closure.address, as: UnsafeRawPointer.self)
        case (.bytes(let size), .bytes(let bytes)) where bytes.count == size:
            address.copyMemory(from: bytes, byteCount: size)
        default: return false
        }
        return true
    }

    /// The value of kind `kind` at `address` (a result of a call with run-time values).
    @inline(__always)
    init(_ address: UnsafeRawPointer, _ kind: RunTimeLayout.Kind) {
        switch kind {
        case .bool: self = .bool(address.load(as: Bool.self))
        case .int8: self = .signed(Int64(address.load(as: Int8.self)))
        case .int16: self = .signed(Int64(address.loadUnaligned(as: Int16.self)))
        case .int32: self = .signed(Int64(address.loadUnaligned(as: Int32.self)))
        case .int64: self = .signed(address.loadUnaligned(as: Int64.self))
        case .uint8: self = .unsigned(UInt64(address.load(as: UInt8.self)))
        case .uint16: self = .unsigned(UInt64(address.loadUnaligned(as: UInt16.self)))
        case .uint32: self = .unsigned(UInt64(address.loadUnaligned(as: UInt32.self)))
        case .uint64: self = .unsigned(address.loadUnaligned(as: UInt64.self))
        case .float: self = .floatingPoint(Double(address.loadUnaligned(as: Float.self)))
        case .double: self = .floatingPoint(address.loadUnaligned(as: Double.self))
        case .longDouble:
            #if arch(x86_64)
            self = .longDouble(address.loadUnaligned(as: Float80.self))
            #else
            self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: CType.longDouble.size)))
            #endif
        case .pointer: self = .pointer(UInt(bitPattern: address.loadUnaligned(as: UnsafeRawPointer?.self)))
        case .void: self = .bytes([])
        case .bytes(let size): self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: size)))
        }
    }
}
