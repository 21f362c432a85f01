import DelegateKit
import DelegateKitFixtures
import Testing

/// Closures of many parameters: of seven and eight, which the last fixed-arity overloads take (in an
/// optimized build, in register form where every argument arrives in a register, else handed libffi's
/// array element by element), and of more, which run in pack form (`PackFunction`), as a debug build runs
/// seven and eight too. Called from C as `CClosure`s and as slots, with narrow results, `Void` results,
/// every argument in vector registers (the register path, where it runs), and what they capture released
/// with them. Both call paths: CI runs the suite with `DELEGATEKIT_FAST_PATH=0` too.
@Suite struct ArityTests {
    /// Checks every argument `fx_call_narrow9` passes; -5 when all are right, else 42.
    static let narrow9: @Sendable (Int8, Int16, Int32, Int64, Float, Double, UInt8, UInt16, UnsafeMutableRawPointer?) -> Int8 = {
        a, b, c, d, e, f, g, h, p in
        let right = a == -3 && b == -300 && c == -70000 && d == -5_000_000_000 && e == 1.5 && f == -2.25 && g == 200 && h == 60000
            && UInt(bitPattern: p) == 0x40
        return right ? -5 : 42
    }

    static let protocol9 = ProtocolDescriptor(name: "arity", methods: [
        MethodDescriptor(name: "narrow", signature: CSignature(.int8, [.int8, .int16, .int32, .int64, .float, .double, .uint8, .uint16, .pointer])),
        MethodDescriptor(name: "sum12", signature: CSignature(.int64, Array(repeating: .int64, count: 12))),
    ])

    @Test func aNarrowResultOfNineParametersAsACClosureAndAsSlots() throws {
        let closure = try CClosure(Self.narrow9)
        #expect(fx_call_narrow9(closure.address) == -5)

        let delegate = DynamicDelegate(protocol: Self.protocol9)
        try delegate.implement("narrow", Self.narrow9)
        #expect(fx_call_narrow9(delegate.table.load(as: UnsafeRawPointer.self)) == -5)
        try delegate.setPolicy(.stable)
        #expect(fx_call_narrow9(delegate.table.load(as: UnsafeRawPointer.self)) == -5)
    }

    @Test func aBoolResultOfSevenParameters() throws {
        let inOrder: @Sendable (Int32, Int32, Int32, Int32, Int32, Int32, Int32) -> Bool = { a, b, c, d, e, f, g in
            let arguments: [Int32] = [a, b, c, d, e, f, g]
            return arguments == Array(1...7)
        }
        let closure = try CClosure(inOrder)
        #expect(fx_call_bool7(closure.address) == 1)
    }

    @Test func aVoidClosureOfEightParametersRuns() throws {
        // Stated apart, its sum in steps: Swift 6.2's type checker gives up on a long sum inside the literal.
        let doubledSum: @Sendable (UnsafeMutablePointer<Int64>?, Double, Double, Double, Double, Double, Double, Double) -> Void = {
            out, a, b, c, d, e, f, g in
            let sum: Double = [a, b, c, d, e, f, g].reduce(0, +)
            out!.pointee = Int64(sum * 2)
        }
        let closure = try CClosure(doubledSum)
        var out: Int64 = 0
        fx_call_void8(closure.address, &out)
        #expect(out == 49)
    }

    @Test func eightVectorArgumentsWithANarrowResult() throws {
        // Every argument in a vector register: the register path where it runs, through the registers'
        // argument array into the pack.
        let closure = try CClosure {
            (a: Double, b: Double, c: Double, d: Double, e: Double, f: Double, g: Double, h: Float) -> Int16 in
            let weighted: Double = [a, b, c, d, e, f, g].enumerated().reduce(0) { $0 + Double($1.offset + 1) * $1.element }
            return Int16(-weighted - Double(h * 2))
        }
        #expect(fx_call_floating8(closure.address) == -(1 + 4 + 9 + 16 + 25 + 36 + 49) - 17)
    }

    @Test func twelveIntegersAsACClosureAndAsASlot() throws {
        let weighted: @Sendable (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = {
            a, b, c, d, e, f, g, h, i, j, k, l in
            [a, b, c, d, e, f, g, h, i, j, k, l].enumerated().reduce(0) { $0 + Int64($1.offset + 1) * $1.element }
        }
        let expected = (1...12).reduce(Int64(0)) { $0 + $1 * $1 }
        let closure = try CClosure(weighted)
        #expect(fx_call_i64x12(closure.address) == expected)

        let delegate = DynamicDelegate(protocol: Self.protocol9)
        try delegate.implement("sum12", weighted)
        #expect(fx_call_i64x12(delegate.table.advanced(by: MemoryLayout<UnsafeRawPointer>.stride).load(as: UnsafeRawPointer.self)) == expected)
    }

    @Test func whatAClosureOfManyParametersCapturesIsReleasedWithIt() throws {
        final class Captured: Sendable {}
        weak var watched: Captured?
        do {
            let captured = Captured()
            watched = captured
            let closure = try CClosure { (a: Int32, b: Int32, c: Int32, d: Int32, e: Int32, f: Int32, g: Int32) -> Bool in
                withExtendedLifetime(captured) { [a, b, c, d, e, f, g].reduce(0, +) == 28 }
            }
            #expect(watched != nil)
            #expect(fx_call_bool7(closure.address) == 1)
        }
        #expect(watched == nil)
    }

    /// A table with members of seven and eight parameters, as a C struct imported by Swift declares them.
    struct ManyParameters {
        var seven: (@convention(c) (Double, Double, Double, Double, Double, Double, Double) -> Double)?
        var eight: (@convention(c) (UnsafeMutableRawPointer?, Int32, Int32, Int32, Int32, Int32, Int32, Int32) -> Int32)?
    }

    /// A key path literal to a member of seven or eight parameters gives the closure its types (Swift 6.3
    /// and later), as one of up to six does.
    @Test func aKeyPathToAMemberOfEightParametersGivesTheClosureItsTypes() throws {
        let delegate = TypedDelegate(for: ManyParameters.self)
        #if compiler(>=6.3)
        try delegate.implement(\.seven) { a, _, _, _, _, _, g in a * g }
        try delegate.implement(\.eight) { _, a, _, _, _, _, _, g in a &- g }
        #else
        try delegate.implement(\.seven) { (a: Double, _: Double, _: Double, _: Double, _: Double, _: Double, g: Double) in a * g }
        try delegate.implement(\.eight) { (_: UnsafeMutableRawPointer?, a: Int32, _: Int32, _: Int32, _: Int32, _: Int32, _: Int32, g: Int32) in a &- g }
        #endif
        let table = delegate.table.assumingMemoryBound(to: ManyParameters.self).pointee
        #expect(table.seven?(1.5, 2, 3, 4, 5, 6, 7) == 10.5)
        #expect(table.eight?(nil, 1, 2, 3, 4, 5, 6, 7) == -6)
    }

    /// Closures of seven and eight parameters, in the fixed-arity form the overloads choose and in pack
    /// form, as a `CClosure`, a slot and a `.stable` slot, called through C (`delegatekit-trampolines
    /// arities`): two take registers only (on x86_64 and aarch64), two have more integer arguments than the
    /// register path's five, one on the caller's stack on x86_64. In a release build the fixed-arity forms
    /// are their own (register form; libffi's array handed on element by element), in a debug build pack
    /// form as well; on both call paths.
    @Test func sevenAndEightParametersInEachFormAgree() throws {
        for build in try ReleaseBuild.builds(of: "delegatekit-trampolines") {
            for fastPath in ["1", "0"] {
                let label = "\(build.name), DELEGATEKIT_FAST_PATH=\(fastPath)"
                let child = run(build.path, ["arities"], environment: ["DELEGATEKIT_FAST_PATH": fastPath])
                #expect(child.termination == .exit(0), "\(label): \(child.output)")
                let lines = child.output.split(separator: "\n")
                // 4 closures, each in 2 forms, as a closure, a slot and a `.stable` slot.
                #expect(lines.count == 4 * 2 * 3, "\(label): \(child.output)")
                #expect(lines.allSatisfy { $0.hasSuffix(": right") }, "\(label): \(child.output)")
                let entry = fastPath == "1" && ExpectedRegisterPath.onThisCPU ? "registers" : "libffi"
                #expect(lines.filter { $0.hasPrefix("doubles8 fixed arity closure ") } == ["doubles8 fixed arity closure \(entry): right"], "\(label)")
            }
        }
    }

    @Test func whatAClosureOfEightParametersCapturesIsReleasedWithIt() throws {
        final class Captured: Sendable {}
        weak var watched: Captured?
        do {
            let captured = Captured()
            watched = captured
            // Eight integers: more than the register path takes, so handed libffi's array element by element.
            let closure = try CClosure { (a: Int64, b: Int64, c: Int64, d: Int64, e: Int64, f: Int64, g: Int64, h: Int64) -> Int64 in
                withExtendedLifetime(captured) { a &+ b &+ c &+ d &+ e &+ f &+ g &+ h }
            }
            #expect(watched != nil)
            let result = try decode(
                callFromC(closure.address, closure.signature, Int64(1), Int64(2), Int64(3), Int64(4), Int64(5), Int64(6), Int64(7), Int64(8)),
                as: Int64.self)
            #expect(result == 36)
        }
        #expect(watched == nil)
    }

    #if arch(x86_64)
    @Test func anArgumentAlignedBeyondEightBytesTakesTheArgumentByArgumentPath() throws {
        // Float80 is 16-byte aligned, and libffi does not promise to align its copies of such arguments:
        // such a closure reads each argument itself instead of taking the array as a pack.
        let closure = try CClosure {
            (a: Float80, b: Int64, c: Int64, d: Int64, e: Int64, f: Int64, g: Int64) -> Int64 in
            Int64(a) + b + c + d + e + f + g
        }
        let call = try CFunction(address: closure.address, signature: closure.signature)
        let result: Int64 = try call.call(Float80(10), Int64(1), Int64(2), Int64(3), Int64(4), Int64(5), Int64(6))
        #expect(result == 31)
    }
    #endif
}
