/// A C value known only at run time: an argument or result of a ``CFunction`` called with run-time values
/// (``CFunction/call(_:variadicTypes:)``), and an argument or result of an ``ObservedCall``.
///
/// Each case holds a kind of C value at its widest: every signed integer type is ``signed(_:)``, every
/// unsigned one (and `size_t`) ``unsigned(_:)``, `float`, `double` and `long double` are
/// ``floatingPoint(_:)``, a pointer is its address (``pointer(_:)``, 0 for `NULL`) and a struct its bytes
/// (``bytes(_:)``). Passed to a function, a value is converted to the argument's C type, and one the type
/// cannot hold (a negative value for an unsigned type, 300 for `uint8_t`) throws.
public enum CDynamicValue: Sendable, Hashable, CustomStringConvertible {
    /// `bool`.
    case bool(Bool)
    /// A signed integer of any width.
    case signed(Int64)
    /// An unsigned integer of any width (`size_t` too).
    case unsigned(UInt64)
    /// `float`, `double` or `long double`, as a `Double`.
    case floatingPoint(Double)
    /// A pointer's address (0 for NULL).
    case pointer(UInt)
    /// A struct's bytes.
    case bytes([UInt8])

    init(_ address: UnsafeRawPointer, _ type: CType) {
        switch type {
        case .bool: self = .bool(address.load(as: Bool.self))
        case .int8: self = .signed(Int64(address.load(as: Int8.self)))
        case .int16: self = .signed(Int64(address.loadUnaligned(as: Int16.self)))
        case .int32: self = .signed(Int64(address.loadUnaligned(as: Int32.self)))
        case .int64: self = .signed(address.loadUnaligned(as: Int64.self))
        case .uint8: self = .unsigned(UInt64(address.load(as: UInt8.self)))
        case .uint16: self = .unsigned(UInt64(address.loadUnaligned(as: UInt16.self)))
        case .uint32: self = .unsigned(UInt64(address.loadUnaligned(as: UInt32.self)))
        case .uint64, .size: self = .unsigned(address.loadUnaligned(as: UInt64.self))
        case .float: self = .floatingPoint(Double(address.loadUnaligned(as: Float.self)))
        case .double: self = .floatingPoint(address.loadUnaligned(as: Double.self))
        case .longDouble:
            #if arch(x86_64)
            self = .floatingPoint(Double(address.loadUnaligned(as: Float80.self)))
            #else
            self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: type.size)))
            #endif
        case .pointer: self = .pointer(UInt(bitPattern: address.loadUnaligned(as: UnsafeRawPointer?.self)))
        case .void, .structure: self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: type.size)))
        }
    }

    /// The value as C's printf would show it: `42`, `0.5`, `0x7f…`, `NULL`, `{16 bytes}`.
    public var description: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .signed(let value): return "\(value)"
        case .unsigned(let value): return "\(value)"
        case .floatingPoint(let value): return "\(value)"
        case .pointer(let address): return address == 0 ? "NULL" : "0x" + String(address, radix: 16)
        case .bytes(let bytes): return "{\(bytes.count) bytes}"
        }
    }
}

/// The name ``CDynamicValue`` had before it also carried results of calls into C.
@available(*, deprecated, renamed: "CDynamicValue")
public typealias CArgumentValue = CDynamicValue
