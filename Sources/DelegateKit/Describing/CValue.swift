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
extension Int8: CValue { /// `int8_t`.
    @inlinable public static var cType: CType { .int8 } }
extension UInt8: CValue { /// `uint8_t`.
    @inlinable public static var cType: CType { .uint8 } }
extension Int16: CValue { /// `int16_t`.
    @inlinable public static var cType: CType { .int16 } }
extension UInt16: CValue { /// `uint16_t`.
    @inlinable public static var cType: CType { .uint16 } }
extension Int32: CValue { /// `int32_t`.
    @inlinable public static var cType: CType { .int32 } }
extension UInt32: CValue { /// `uint32_t`.
    @inlinable public static var cType: CType { .uint32 } }
extension Int64: CValue { /// `int64_t`.
    @inlinable public static var cType: CType { .int64 } }
extension UInt64: CValue { /// `uint64_t`.
    @inlinable public static var cType: CType { .uint64 } }
extension Int: CValue { /// `long` / `ssize_t` (64 bits on LP64).
    @inlinable public static var cType: CType { MemoryLayout<Int>.size == 8 ? .int64 : .int32 } }
extension UInt: CValue { /// `unsigned long` / `size_t` (64 bits on LP64).
    @inlinable public static var cType: CType { MemoryLayout<UInt>.size == 8 ? .uint64 : .uint32 } }
extension Int128: CValue { /// `__int128`, where the libffi in use passes it.
    @inlinable public static var cType: CType { .int128 } }
extension UInt128: CValue { /// `unsigned __int128`, where the libffi in use passes it.
    @inlinable public static var cType: CType { .uint128 } }
extension Float: CValue { /// `float`.
    @inlinable public static var cType: CType { .float } }
extension Double: CValue { /// `double`.
    @inlinable public static var cType: CType { .double } }
#if arch(x86_64) && !os(Windows)
extension Float80: CValue { /// `long double` (x86_64's 80-bit extended format).
    @inlinable public static var cType: CType { .longDouble } }
#endif

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
extension Optional: CValue where Wrapped: CPointerValue {
    /// ``CType/pointer``: an optional pointer is a pointer that may be NULL.
    @inlinable public static var cType: CType { .pointer }
}
