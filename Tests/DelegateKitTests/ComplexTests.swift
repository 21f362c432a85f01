@testable import DelegateKit  // RegisterPath.withLibffiEntry: both call paths in one process
import DelegateKitFixtures
import Foundation
import Testing

/// C's complex numbers: parsed, laid out as C lays them out, passed to libm and to the fixture's
/// callbacks by value, and taken by closures, on both call paths. `long double _Complex` comes back from
/// a function in x86_64's x87 registers, which only libffi's complex type describes.
@Suite struct ComplexTests {
    private static func onBothPaths(_ body: () throws -> Void) throws {
        try body()
        try RegisterPath.withLibffiEntry(body)
    }

    @Test func theParserReadsEverySpelling() throws {
        let spellings: [(String, CType)] = [
            ("double _Complex (float _Complex)", .complexDouble),
            ("_Complex double (_Complex float)", .complexDouble),
            ("double complex (float complex)", .complexDouble),
            ("complex double (complex float)", .complexDouble),
            ("__complex__ double (float __complex__)", .complexDouble),
            ("long double _Complex (long double complex)", .complexLongDouble),
            ("_Complex long double (complex long double)", .complexLongDouble),
        ]
        for (text, result) in spellings {
            let signature = try CSignature(parsing: text)
            #expect(signature.returnType == result, "\(text)")
            #expect(signature.argumentTypes.first.map { $0 == .complexFloat || $0 == .complexLongDouble } == true, "\(text)")
        }
        // `complex` is <complex.h>'s macro only beside a real type; elsewhere it is a name.
        #expect(try CSignature(parsing: "int (int complex)") == CSignature(.int32, [.int32]))
        #expect(try CSignature(parsing: "double cexp_of(double complex z)") == CSignature(.double, [.complexDouble]))
        for refused in ["_Complex (void)", "void (_Complex int)", "void (double _Imaginary)", "void (short double _Complex)"] {
            #expect(throws: DelegateError.self, "\(refused)") { try CSignature(parsing: refused) }
        }
        #expect(CType.complexLongDouble.description == "long double _Complex")
        #expect(try CSignature(parsing: CSignature(.complexFloat, [.complexDouble]).description).returnType == .complexFloat)
    }

    @Test func theLayoutIsCsAndLibffis() throws {
        #expect(CType.complexFloat.size == MemoryLayout<CComplex<Float>>.stride)
        #expect(CType.complexDouble.size == MemoryLayout<CComplex<Double>>.stride)
        #expect(CType.complexDouble.alignment == MemoryLayout<CComplex<Double>>.alignment)
        #if arch(x86_64)
        #expect(CType.complexLongDouble.size == MemoryLayout<CComplex<Float80>>.stride)
        #expect(try CComplex<Float80>.checkedCType() == .complexLongDouble)
        #endif
        for type in [CType.complexFloat, .complexDouble, .complexLongDouble] {
            let prepared = try PreparedSignature.prepared(CSignature(type, [type]))
            #expect(prepared.ffiReturnLayout == (type.size, type.alignment), "\(type)")
        }
        #expect(CType.complexFloat != .structure([.float, .float]))
        #expect(Set([CType.complexFloat, .complexDouble, .complexLongDouble, .double]).count == 4)
    }

    @Test func libmTakesAndReturnsThem() throws {
        let cabs = try CFunction("cabs", declaration: "double cabs(double complex)")
        let cexp = try CFunction("cexp", declaration: "double complex cexp(double complex)")
        let conjf = try CFunction("conjf", declaration: "float complex conjf(float complex)")
        try Self.onBothPaths {
            #expect(try cabs.call(CComplex(3.0, 4.0), returning: Double.self) == 5)
            let e = try cexp.call(CComplex(0.0, Double.pi), returning: CComplex<Double>.self)
            #expect(abs(e.real + 1) < 1e-15 && abs(e.imaginary) < 1e-15)
            #expect(try conjf.call(CComplex<Float>(1.5, 2.5), returning: CComplex<Float>.self) == CComplex(1.5, -2.5))
            // Run-time values.
            #expect(try cabs.call([.complex(real: 6, imaginary: 8)]) == .floatingPoint(10))
            #expect(try conjf.call([.complex(real: 1, imaginary: 1)]) == .complex(real: 1, imaginary: -1))
        }
    }

    /// csqrtl returns a `long double _Complex`: in x87 registers on x86_64, in q0 and q1 on aarch64.
    @Test func libmReturnsALongDoubleComplex() throws {
        let csqrtl = try CFunction("csqrtl", declaration: "long double complex csqrtl(long double complex)")
        let real = try CFunction(address: fixture("fx_complex_long_real"), declaration: "double (long double _Complex)")
        let imaginary = try CFunction(address: fixture("fx_complex_long_imaginary"), declaration: "double (long double _Complex)")
        try Self.onBothPaths {
            #if arch(x86_64)
            let root = try csqrtl.call(CComplex<Float80>(-4, 0), returning: CComplex<Float80>.self)
            #expect(root == CComplex(0, 2))
            #endif
            // Run-time values: the argument converted exactly, the result as its bytes.
            guard case .bytes(let bytes) = try csqrtl.call([.complex(real: 0, imaginary: 2)]) else {
                Issue.record("a long double _Complex result is not read as bytes")
                return
            }
            #expect(bytes.count == CType.complexLongDouble.size)
            #expect(try real.call([.bytes(bytes)]) == .floatingPoint(1))
            #expect(try imaginary.call([.bytes(bytes)]) == .floatingPoint(1))
        }
    }

    @Test func closuresTakeAndReturnThem() throws {
        let apply = try CFunction(
            address: fixture("fx_complex_apply"),
            declaration: "double _Complex (double _Complex (*)(double _Complex, float _Complex), double _Complex, float _Complex)")
        let applyFloat = try CFunction(
            address: fixture("fx_complex_float_apply"), declaration: "float complex (float complex (*)(float complex, int), float complex, int)")
        try Self.onBothPaths {
            let multiply = try CClosure { (z: CComplex<Double>, w: CComplex<Float>) -> CComplex<Double> in
                let (c, d) = (Double(w.real), Double(w.imaginary))
                return CComplex(z.real * c - z.imaginary * d, z.real * d + z.imaginary * c)
            }
            #expect(multiply.signature == CSignature(.complexDouble, [.complexDouble, .complexFloat]))
            // 2 · (1 + 2i)(3 + 4i) = 2 · (-5 + 10i)
            let product = try apply.call(multiply.address, CComplex(1.0, 2.0), CComplex<Float>(3, 4), returning: CComplex<Double>.self)
            #expect(product == CComplex(-10, 20))
            let scale = try CClosure { (z: CComplex<Float>, n: Int32) -> CComplex<Float> in CComplex(z.real * Float(n), z.imaginary * Float(n)) }
            #expect(try applyFloat.call(scale.address, CComplex<Float>(1, -1), Int32(3), returning: CComplex<Float>.self) == CComplex(4, -3))
            // A run-time signature, through a CInvocation.
            let conjugate = try CClosure(signature: CSignature(.complexDouble, [.complexDouble, .complexFloat])) { invocation in
                let z: CComplex<Double> = invocation.argument(0)
                invocation.setReturnValue(CComplex(z.real, -z.imaginary))
            }
            #expect(try apply.call(conjugate.address, CComplex(1.0, 2.0), CComplex<Float>(0, 0), returning: CComplex<Double>.self) == CComplex(2, -4))
        }
    }

    /// A closure returning a `long double _Complex` to C: libffi's closure returns it in the x87 registers
    /// on x86_64. Through bytes, so that it runs on aarch64 too; typed with `Float80` on x86_64.
    @Test func closuresReturnALongDoubleComplex() throws {
        let apply = try CFunction(
            address: fixture("fx_complex_long_apply"), declaration: "long double _Complex (long double _Complex (*)(long double _Complex), long double _Complex)")
        let real = try CFunction(address: fixture("fx_complex_long_real"), declaration: "double (long double _Complex)")
        let imaginary = try CFunction(address: fixture("fx_complex_long_imaginary"), declaration: "double (long double _Complex)")
        try Self.onBothPaths {
            // Swaps the parts: 2 · (b + ai).
            let swap = try CClosure(signature: CSignature(.complexLongDouble, [.complexLongDouble])) { invocation in
                let half = CType.longDouble.size
                let bytes = Array(invocation.argumentBytes(0))
                (bytes[half...] + bytes[..<half]).withUnsafeBytes { invocation.setReturnBytes($0) }
            }
            guard case .bytes(let result) = try apply.call([try .function(swap), .complex(real: 1.5, imaginary: -3)]) else {
                Issue.record("a long double _Complex result is not read as bytes")
                return
            }
            #expect(try real.call([.bytes(result)]) == .floatingPoint(-6))
            #expect(try imaginary.call([.bytes(result)]) == .floatingPoint(3))
            #if arch(x86_64)
            let typed = try CClosure { (z: CComplex<Float80>) -> CComplex<Float80> in CComplex(z.imaginary, z.real) }
            #expect(try apply.call(typed.address, CComplex<Float80>(1.5, -3), returning: CComplex<Float80>.self) == CComplex(-6, 3))
            #endif
        }
    }

    /// A table member of a complex type, parsed from C, implemented by a closure and called by C.
    @Test func aSlotTakesThem() throws {
        let descriptor = try ProtocolDescriptor(parsing: "struct ops { double complex (*rotate)(double complex z, float complex by); };", name: "ops")
        let delegate = DynamicDelegate(protocol: descriptor)
        try delegate.implement("rotate") { (z: CComplex<Double>, by: CComplex<Float>) -> CComplex<Double> in
            CComplex(-z.imaginary * Double(by.imaginary), z.real * Double(by.imaginary))
        }
        let apply = try CFunction(
            address: fixture("fx_complex_apply"),
            declaration: "double _Complex (double _Complex (*)(double _Complex, float _Complex), double _Complex, float _Complex)")
        let rotate = delegate.table.load(as: UnsafeRawPointer.self)
        try Self.onBothPaths {
            let rotated = try apply.call(rotate, CComplex(1.0, 0.0), CComplex<Float>(0, 1), returning: CComplex<Double>.self)
            #expect(rotated == CComplex(0, 2))
        }
    }
}
