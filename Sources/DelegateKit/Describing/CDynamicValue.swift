/// A C value known only at run time: an argument or result of a ``CFunction`` called with run-time values
/// (``CFunction/call(_:variadicTypes:)``), and an argument or result of an ``ObservedCall``.
///
/// Each case holds a kind of C value at its widest: every signed integer type is ``signed(_:)``, every
/// unsigned one (and `size_t`) ``unsigned(_:)``, `float` and `double` are ``floatingPoint(_:)``, a pointer
/// is its address (``pointer(_:)``, 0 for `NULL`) and a struct its bytes (``bytes(_:)``). A `long double`
/// is exact: ``longDouble(_:)`` on x86_64, where Swift has `Float80`; its bytes elsewhere (aarch64
/// Linux's is a 128-bit quad, which Swift has no type for). Passed to a function, a value is converted to
/// the argument's C type, and one the type cannot hold (a negative value for an unsigned type, 300 for
/// `uint8_t`) throws; a `long double` argument also takes a ``floatingPoint(_:)``, which it holds
/// exactly, or its own bytes.
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
        case .pointer(let address): return address == 0 ? "NULL" : "0x" + String(address, radix: 16)
        case .bytes(let bytes): return "{\(bytes.count) bytes}"
        case .closure(let closure): return "0x" + String(UInt(bitPattern: closure.address), radix: 16)
        }
    }
}

