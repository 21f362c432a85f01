/// A C complex number, `float _Complex`, `double _Complex` or (on x86_64) `long double _Complex`, as a
/// ``CValue``: the real part, then the imaginary part.
///
/// C lays a complex number out as an array of two of its real type (C11 6.2.5), and so does this struct,
/// so a closure may take and return it and a ``CFunction`` pass it by value. Swift imports no C function
/// that takes or returns one (`cabs`, `cexp`): call them through a ``CFunction``.
///
/// ```swift
/// let cexp = try CFunction("cexp", declaration: "double complex cexp(double complex)")
/// let z = try cexp.call(CComplex(0.0, Double.pi), returning: CComplex<Double>.self)   // -1 + 0i
/// ```
///
/// It is DelegateKit's own type rather than swift-numerics' `Complex`, which DelegateKit does not depend
/// on; that type has the same layout, so a program that uses it can state
/// `extension Complex: CValue where RealType == Double { static var cType: CType { .complexDouble } }`.
@frozen
public struct CComplex<RealType: BinaryFloatingPoint & CValue>: CValue, Hashable {
    /// The real part.
    public var real: RealType
    /// The imaginary part.
    public var imaginary: RealType

    /// The complex number `real + imaginary·i`.
    @inlinable
    public init(_ real: RealType, _ imaginary: RealType) {
        self.real = real
        self.imaginary = imaginary
    }

    /// ``CType/complexFloat``, ``CType/complexDouble`` or ``CType/complexLongDouble``, after the real type
    /// (a structure of two of any other).
    @inlinable
    public static var cType: CType {
        switch RealType.cType {
        case .float: return .complexFloat
        case .double: return .complexDouble
        case .longDouble: return .complexLongDouble
        default: return .structure([RealType.cType, RealType.cType])
        }
    }
}

extension CComplex: Sendable where RealType: Sendable {}

extension CComplex: CustomStringConvertible {
    /// `real + imaginary i`, as `1.0 - 2.0i`.
    public var description: String {
        imaginary.sign == .minus ? "\(real) - \(-imaginary)i" : "\(real) + \(imaginary)i"
    }
}
