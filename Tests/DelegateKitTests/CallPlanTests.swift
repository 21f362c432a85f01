@testable import DelegateKit
import DelegateKitFixtures
import Testing

/// Calls into C by a plan made once per signature (`CFFIShim/Libffi/CallPlan.c`), which every call
/// through libffi's form takes where the register path runs, against the same calls through `ffi_call`
/// (the register path suppressed on the thread): typed and with run-time values, every scalar, every
/// struct of the fixture, arguments past the registers on the stack, variadic calls.
@Suite struct CallPlanTests {
    /// Whether calls of `function` on this thread take its plan (a variadic function's calls take the
    /// interface of their list of types instead).
    static func byPlan(_ function: CFunction) -> Bool {
        function.libffiCall.map { LibffiShim.callsByPlan($0.cif) } ?? false
    }

    /// `function` called by `call` on its plan and through `ffi_call`, where the plan exists: the first
    /// result, after checking that the two agree by `same`.
    static func bothWays<T>(
        _ function: CFunction, planned: Bool, _ call: () throws -> T, same: (T, T) -> Bool,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> T {
        #expect(byPlan(function) == planned, sourceLocation: sourceLocation)
        let byPlan = try call()
        let byLibffi = try RegisterPath.withLibffiEntry {
            #expect(!Self.byPlan(function), sourceLocation: sourceLocation)
            return try call()
        }
        #expect(same(byPlan, byLibffi), sourceLocation: sourceLocation)
        return byPlan
    }

    /// Where calls have plans: with the register path, scalars and structs on both CPUs; `long double`, and
    /// a struct holding one, on x86_64 only (aarch64's quad keeps `ffi_call`).
    static var plansScalars: Bool { RegisterPath.isAvailable }
    static var plansStructs: Bool { RegisterPath.isAvailable }
    static func plans(_ type: CType) -> Bool {
        #if arch(x86_64)
        RegisterPath.isAvailable
        #else
        RegisterPath.isAvailable && !leaves(of: type).contains { $0.type == .longDouble }
        #endif
    }

    /// `fx_ref_<S>(a, b)` through a `CFunction` typed and with run-time values, both ways, against the
    /// direct call: the fields `fields` lists compared (padding holds whatever the callee left there).
    static func agree<S: CValue>(_ type: S.Type, name: String, reference: (S, S) -> S, fields: [fx_field]) throws {
        let function = try CFunction(address: fixture(name), signature: CSignature(S.cType, [S.cType, S.cType]), name: name)
        let planned = plans(S.cType)
        for seed in 1...3 as ClosedRange<UInt64> {
            let a = sample(S.self, seed: seed), b = sample(S.self, seed: seed + 50)
            let expected = reference(a, b)
            let typed: S = try bothWays(function, planned: planned, { try function.call(a, b) }, same: { sameFields($0, $1, fields: fields) })
            #expect(sameFields(typed, expected, fields: fields), "\(S.self), typed, seed \(seed)")
            func value(_ result: CDynamicValue) -> S? {
                guard case .bytes(let bytes) = result, bytes.count == MemoryLayout<S>.size else { return nil }
                return bytes.withUnsafeBytes { $0.loadUnaligned(as: S.self) }
            }
            let dynamic = try bothWays(
                function, planned: planned, { try function.call([.bytes(bytes(of: a)), .bytes(bytes(of: b))]) },
                same: { x, y in value(x).flatMap { x in value(y).map { sameFields(x, $0, fields: fields) } } ?? false })
            #expect(value(dynamic).map { sameFields($0, expected, fields: fields) } == true, "\(S.self), run-time values, seed \(seed)")
        }
    }

    static func bytes<S>(of value: S) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    @Test(arguments: structCases) func everyStructOfTheFixtureAgrees(_ structCase: StructCase) throws {
        try structCase.callIntoC()
    }

    /// Every scalar in and out, after a struct that keeps the call off the registers: narrow ones sign- or
    /// zero-extended as C compilers expect of a caller and widened as libffi widens a result; typed and
    /// with run-time values, both ways agree with the direct call. (`CFunctionTests` calls the same
    /// functions without the struct, in registers.)
    @Test func everyScalarAgrees() throws {
        struct Agreeing: ScalarCaseVisitor {
            let pad = fx_pad(a: 1, b: 2, c: 3, d: 4)
            let values = CFunctionTests()
            func visit<T: CValue & Equatable>(_ name: String, _ a: T, _ b: T, direct: (T, T) -> T) throws {
                try visit(name, a, b, direct: direct, runTime: true)
            }
            func visit<T: CValue & Equatable>(_ name: String, _ a: T, _ b: T, direct: (T, T) -> T, runTime: Bool) throws {
                let function = try CFunction(
                    address: fixture("fx_after_struct_\(name)"), signature: CSignature(T.cType, [fx_pad.cType, T.cType, T.cType]))
                let typed: T = try CallPlanTests.bothWays(function, planned: CallPlanTests.plans(T.cType), { try function.call(pad, a, b) }, same: ==)
                #expect(typed == direct(a, b), "\(name)")
                guard runTime else { return }
                let padValue = CDynamicValue.bytes(CallPlanTests.bytes(of: pad))
                let dynamic = try CallPlanTests.bothWays(
                    function, planned: CallPlanTests.plans(T.cType), { try function.call([padValue, values.value(a), values.value(b)]) }, same: ==)
                #expect(dynamic == values.value(direct(a, b)), "\(name)")
            }
        }
        try visitEveryScalarCase(Agreeing())
        #if arch(x86_64)
        let tiny = Float80(sign: .plus, exponent: -63, significand: 1)
        try Agreeing().visit("ld", Float80(1) + tiny, -tiny, direct: fx_ref_ld, runTime: false)  // a run-time value's bytes hold padding
        #expect(fx_ref_ld(Float80(1) + tiny, -tiny) != 1)
        #endif
    }

    /// Sixteen arguments of eight kinds: the vector registers full, the integer ones full and the rest on
    /// the stack, each narrow one extended.
    @Test func argumentsPastTheRegistersGoOnTheStack() throws {
        let function = try CFunction(
            address: fixture("fx_many16"),
            declaration: "double fx_many16(int8_t, double, int16_t, float, int32_t, double, int64_t, float, uint8_t, double, uint16_t, float, uint32_t, double, uint64_t, float)")
        let result: Double = try Self.bothWays(function, planned: Self.plansScalars, {
            try function.call(
                Int8(-7), 1.5, Int16(-300), Float(2.25), Int32(-70000), -3.125, Int64(-5_000_000_000), Float(4.5),
                UInt8(200), 0.0625, UInt16(60000), Float(-8.75), UInt32(4_000_000_000), 1024.5, UInt64(9_000_000_000), Float(0.5))
        }, same: ==)
        #expect(result == fx_ref_many16())
    }

    /// The arguments of two bugs of libffi's `ffi_call` on x86_64 (CallingC.md): a struct of an integer
    /// and a float whose integer takes the last integer register, and a float after five chars before a
    /// struct of a char and a double. By plan they arrive intact; through `ffi_call` they do only where
    /// libffi has the bugs fixed (the first in 3.4.7), so that way is not compared.
    @Test(.enabled(if: CallPlanTests.plansStructs)) func theArgumentsOfLibffisCallBugsArriveIntact() throws {
        let pairs = (1...6).map { fx_long_float(n: UInt($0), f: Float($0) / 4) }
        let six = try CFunction(
            address: fixture("fx_six_long_floats"), signature: CSignature(.double, Array(repeating: fx_long_float.cType, count: 6)))
        #expect(Self.byPlan(six))
        let sum: Double = try six.call(pairs[0], pairs[1], pairs[2], pairs[3], pairs[4], pairs[5])
        #expect(sum == fx_six_long_floats(pairs[0], pairs[1], pairs[2], pairs[3], pairs[4], pairs[5]))
        var formula = 0.0
        for k in 1...6 {
            let position = Double(k)
            formula += position * (position * 1000 + position / 4)
        }
        #expect(sum == formula)

        let chars = try CFunction(
            address: fixture("fx_chars_float_pair"),
            signature: CSignature(.double, Array(repeating: CChar.cType, count: 5) + [.float, fx_char_double.cType]))
        #expect(Self.byPlan(chars))
        let pair = fx_char_double(c: 9, d: 0.5)
        let total: Double = try chars.call(CChar(1), CChar(2), CChar(3), CChar(4), CChar(5), Float(1.5), pair)
        #expect(total == 1 + 4 + 9 + 16 + 25 + 9 + 63 + 4)
        #expect(total == fx_chars_float_pair(1, 2, 3, 4, 5, 1.5, pair))
    }

    /// A variadic call past the registers: `al` counts the vector registers, the rest of the doubles and
    /// a `long double` (x86_64) go on the stack as the callee's `va_arg` reads them.
    @Test func variadicCallsAgree() throws {
        let function = try CFunction(address: fixture("fx_sum_variadic"), signature: CSignature(.double, [.pointer]), isVariadic: true)
        let kinds = "dddddddddidl"
        // A variadic call's interface is the one prepared for its list of promoted types.
        let types: [CType] = [.pointer] + Array(repeating: .double, count: 9) + [.int32, .double, .int64]
        let cif = try PreparedSignature.prepared(CSignature(.double, types), fixedArgumentCount: 1).cif
        #expect(LibffiShim.callsByPlan(cif) == Self.plansScalars)
        let sum: Double = try kinds.withCString { kinds in
            try Self.bothWays(function, planned: false, {
                try function.call(kinds, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, Int32(10), 11.0, 12)
            }, same: ==)
        }
        #expect(sum == 78)
        let dynamic = try kinds.withCString { kinds in
            try Self.bothWays(function, planned: false, {
                try function.call(
                    [.pointer(UInt(bitPattern: kinds))] + (1...9).map { .floatingPoint(Double($0)) } + [.signed(10), .floatingPoint(11), .signed(12)],
                    variadicTypes: Array(repeating: .double, count: 9) + [.int32, .double, .int64])
            }, same: ==)
        }
        #expect(dynamic == .floatingPoint(78))
        #if arch(x86_64)
        // Nine doubles leave one stack word taken: the `long double` after them starts at the next 16 bytes.
        let withLongDouble: Double = try "dddddddddL".withCString { kinds in
            try Self.bothWays(function, planned: false, {
                try function.call(kinds, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, Float80(10.5))
            }, same: ==)
        }
        #expect(withLongDouble == 55.5)
        #endif
    }
}
