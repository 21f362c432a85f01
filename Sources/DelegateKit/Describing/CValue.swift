/// A Swift type that travels through C by value, with a stated C layout.
///
/// The built-in integer, floating-point and pointer types conform already. Any trivial type (a struct
/// of trivial members, including the structs Swift imports from C headers) can join by stating its C type:
///
/// ```swift
/// struct Pair { var tag: UInt8; var value: Double }
/// extension Pair: CValue { static var cType: CType { .structure([.uint8, .double]) } }
/// ```
///
/// DelegateKit checks the stated type's size and alignment against the Swift type's when a closure is
/// created, and refuses types that are not trivial (that hold references), with a typed error.
public protocol CValue: SendableMetatype {
    /// The C type with this type's layout and calling convention.
    static var cType: CType { get }
}

extension CValue {
    /// ``cType`` after checking it against the Swift layout of `Self`.
    @inlinable
    static func checkedCType() throws -> CType {
        let type = cType
        if case .void = type { return type }  // DelegateKit's own stand-in for Swift's Void.
        guard _isPOD(Self.self) else {
            throw DelegateError.notTrivial(type: String(reflecting: Self.self))
        }
        // For the built-in types every value here is known when compiling, and the check folds away.
        let layout = type.layout
        if layout.size != MemoryLayout<Self>.stride || layout.alignment != MemoryLayout<Self>.alignment {
            throw DelegateError.layoutMismatch(
                type: String(reflecting: Self.self), cType: type,
                swiftSize: MemoryLayout<Self>.stride, swiftAlignment: MemoryLayout<Self>.alignment)
        }
        return type
    }
}

/// The static type of `value`, where code iterates a parameter pack: `type(of:)` there asks the runtime
/// for the value's dynamic type (in case it is a class), a metadata lookup per argument; a `CValue` is a
/// value type, so its static type is the one that counts, known when compiling.
@inlinable @inline(__always)
func staticType<T: CValue>(of _: T) -> T.Type { T.self }

/// Swift's `Void` cannot conform to a protocol; this empty value stands in for it where a closure
/// returning nothing is handled by the same code as one returning a value.
@usableFromInline
struct CVoid: CValue {
    @usableFromInline static var cType: CType { .void }
    @inlinable init() {}
}

extension Bool: CValue { /// `bool` (C's `_Bool`).
    @inlinable public static var cType: CType { .bool } }

// Swift's integers and floating-point types take their C type from their width or format, in one place
// each: the switch folds away once specialized for a concrete type.
extension Int8: CValue {}
extension UInt8: CValue {}
extension Int16: CValue {}
extension UInt16: CValue {}
extension Int32: CValue {}
extension UInt32: CValue {}
extension Int64: CValue {}
extension UInt64: CValue {}
extension Int: CValue {}
extension UInt: CValue {}
extension Int128: CValue {}
extension UInt128: CValue {}
extension Float: CValue {}
extension Double: CValue {}
#if arch(x86_64) && !os(Windows)
extension Float80: CValue {}
#endif

extension CValue where Self: FixedWidthInteger {
    /// The C integer of the same width and signedness: `int8_t` through `uint64_t`; `long` and `unsigned
    /// long` for `Int` and `UInt` (64 bits on LP64); `__int128` and `unsigned __int128` where the libffi
    /// in use passes them. An integer type of another width has no C type here: its empty structure fails
    /// the layout check with ``DelegateError/layoutMismatch(type:cType:swiftSize:swiftAlignment:)``;
    /// state its ``cType`` yourself.
    @inlinable public static var cType: CType {
        switch (bitWidth, isSigned) {
        case (8, true): .int8
        case (8, false): .uint8
        case (16, true): .int16
        case (16, false): .uint16
        case (32, true): .int32
        case (32, false): .uint32
        case (64, true): .int64
        case (64, false): .uint64
        case (128, true): .int128
        case (128, false): .uint128
        default: .structure([])
        }
    }
}

extension CValue where Self: BinaryFloatingPoint {
    /// The C floating-point type with the same format: `float`, `double`, or on x86_64 `long double`
    /// (`Float80`, the 80-bit extended format). A type of another format (`Float16`: C's `_Float16` travels
    /// in floating-point registers, which no ``CType`` describes) fails the layout check the same way.
    @inlinable public static var cType: CType {
        switch (exponentBitCount, significandBitCount) {
        case (8, 23): .float
        case (11, 52): .double
        case (15, 63): .longDouble
        default: .structure([])
        }
    }
}

extension CValue where Self: RawRepresentable, RawValue: CValue {
    /// The raw value's C type: an imported C enum (`VISIT`, `sqlite3_...` flags) travels as its integer,
    /// so `extension VISIT: @retroactive CValue {}` is all it takes. (`@retroactive`, because both the
    /// type and the protocol come from other modules than the one declaring the conformance.) The layout
    /// is checked against `Self`'s as for every other ``CValue``.
    @inlinable public static var cType: CType { RawValue.cType }
}

/// Pointer types, which C sees as ``CType/pointer`` whether or not Swift says they may be NULL.
public protocol CPointerValue: CValue {}
extension CPointerValue {
    /// ``CType/pointer``.
    @inlinable public static var cType: CType { .pointer }
}
extension UnsafeRawPointer: CPointerValue {}
extension UnsafeMutableRawPointer: CPointerValue {}
extension UnsafePointer: CPointerValue {}
extension UnsafeMutablePointer: CPointerValue {}
extension OpaquePointer: CPointerValue {}
// An optional pointer is a pointer that may be NULL.
extension Optional: CValue where Wrapped: CPointerValue {}
extension Optional: CPointerValue where Wrapped: CPointerValue {}
