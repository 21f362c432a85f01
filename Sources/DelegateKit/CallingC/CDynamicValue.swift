/// A C value known only at run time: an argument or result of a ``CFunction`` called with run-time values
/// (``CFunction/call(_:variadicTypes:)``), and an argument or result of an ``ObservedCall``.
///
/// Each case holds a kind of C value at its widest: every signed integer type is ``signed(_:)``, every
/// unsigned one (and `size_t`) ``unsigned(_:)``, `float` and `double` are ``floatingPoint(_:)``, a pointer
/// is its address (``pointer(_:)``, 0 for `NULL`), a `float _Complex` or `double _Complex` is
/// ``complex(real:imaginary:)`` and a struct its bytes (``bytes(_:)``). A `long double`
/// is exact: ``longDouble(_:)`` on x86_64, where Swift has `Float80`; its bytes elsewhere (aarch64
/// Linux's is a 128-bit quad, which Swift has no type for). Passed to a function, a value is converted to
/// the argument's C type, and one the type cannot hold (a negative value for an unsigned type, 300 for
/// `uint8_t`) throws; a `long double` argument also takes a ``floatingPoint(_:)``, which it holds
/// exactly, or its own bytes. A `long double _Complex` is read as its 32 bytes; as an argument it also
/// takes a ``complex(real:imaginary:)``, which it holds exactly. An `__int128` is read as its 16 bytes
/// (little-endian); as an argument it also takes a ``signed(_:)`` or ``unsigned(_:)``.
public enum CDynamicValue: Sendable, Hashable, CustomStringConvertible {
    /// `bool`.
    case bool(Bool)
    /// A signed integer of any width.
    case signed(Int64)
    /// An unsigned integer of any width (`size_t` too).
    case unsigned(UInt64)
    /// `float` or `double`, as a `Double`; as an argument, a `long double` too.
    case floatingPoint(Double)
    #if arch(x86_64)
    /// `long double`, x86's 80-bit extended format, all 64 bits of its significand. (Boxed: held inline,
    /// its 16-byte alignment would double the size of every value and slow every call with run-time
    /// values by a third.)
    indirect case longDouble(Float80)
    #endif
    /// `float _Complex` or `double _Complex`, as two `Double`s; as an argument, a `long double _Complex`
    /// too (held exactly).
    case complex(real: Double, imaginary: Double)
    /// A pointer's address (0 for NULL).
    case pointer(UInt)
    /// A struct's bytes.
    case bytes([UInt8])
    /// A ``CClosure``'s function pointer, as an argument of pointer type: the value holds the closure, so
    /// it lives as long as the call does. Written `try .function(closure)`; a call never returns it.
    case closure(CClosure)

    /// A C function pointer as a pointer argument: a ``CClosure`` (held by the value, see
    /// ``closure(_:)``), a ``CFunction`` (its address), or a `@convention(c)` function value.
    ///
    /// ```swift
    /// try qsort.call([.pointer(base), .unsigned(count), .unsigned(8), .function(compare)])
    /// ```
    ///
    /// - Throws: ``DelegateError/notAFunctionPointer(call:type:)`` for a value of any other type (a Swift
    ///   closure, say, which has no C address: make it a ``CClosure``).
    public static func function<F>(_ function: F) throws(DelegateError) -> CDynamicValue {
        switch FunctionArgument(function) {
        case .closure(let closure): return .closure(closure)
        case .address(let address): return .pointer(UInt(bitPattern: address))
        case nil: throw .notAFunctionPointer(call: "CDynamicValue.function(_:)", type: String(reflecting: F.self))
        }
    }

    /// The value of C type `type` at `address`.
    init(_ address: UnsafeRawPointer, _ type: CType) {
        self.init(address, RunTimeLayout.Kind(type))
    }

    /// The value as C's printf would show it: `42`, `0.5`, `0x7f…`, `NULL`, `{16 bytes}`.
    public var description: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .signed(let value): return "\(value)"
        case .unsigned(let value): return "\(value)"
        case .floatingPoint(let value): return "\(value)"
        #if arch(x86_64)
        case .longDouble(let value): return "\(value)"
        #endif
        case .complex(let real, let imaginary): return CComplex(real, imaginary).description
        case .pointer(let address): return address == 0 ? "NULL" : "0x" + String(address, radix: 16)
        case .bytes(let bytes): return "{\(bytes.count) bytes}"
        case .closure(let closure): return "0x" + String(UInt(bitPattern: closure.address), radix: 16)
        }
    }
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
        case (.int128, .bytes(let bytes)) where bytes.count == 16, (.uint128, .bytes(let bytes)) where bytes.count == 16:
            address.copyMemory(from: bytes, byteCount: 16)
        case (.int128, _): return integer(Int128.self)
        case (.uint128, _): return integer(UInt128.self)
        case (.complexFloat, .complex(let real, let imaginary)):
            address.storeBytes(of: CComplex(Float(real), Float(imaginary)), as: CComplex<Float>.self)
        case (.complexDouble, .complex(let real, let imaginary)):
            address.storeBytes(of: CComplex(real, imaginary), as: CComplex<Double>.self)
        case (.complexLongDouble, .complex(let real, let imaginary)):
            LibffiShim.storeLongDouble(real, to: address)
            LibffiShim.storeLongDouble(imaginary, to: address + CType.longDouble.size)
        case (.complexFloat, .bytes(let bytes)) where bytes.count == CType.complexFloat.size,
             (.complexDouble, .bytes(let bytes)) where bytes.count == CType.complexDouble.size,
             (.complexLongDouble, .bytes(let bytes)) where bytes.count == CType.complexLongDouble.size:
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
        case .complexFloat:
            let value = address.loadUnaligned(as: CComplex<Float>.self)
            self = .complex(real: Double(value.real), imaginary: Double(value.imaginary))
        case .complexDouble:
            let value = address.loadUnaligned(as: CComplex<Double>.self)
            self = .complex(real: value.real, imaginary: value.imaginary)
        case .int128, .uint128:
            self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: 16)))
        case .complexLongDouble:
            self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: CType.complexLongDouble.size)))
        case .pointer: self = .pointer(UInt(bitPattern: address.loadUnaligned(as: UnsafeRawPointer?.self)))
        case .void: self = .bytes([])
        case .bytes(let size): self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: size)))
        }
    }
}
