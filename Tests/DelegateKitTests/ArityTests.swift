@testable import DelegateKit  // RegisterPath.withLibffiEntry: each closure made on libffi's entry too
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

    /// The same closure made through the variadic overload, which takes it in pack form whatever its arity.
    static func packed<each A: CValue, R>(_ body: @escaping @Sendable (repeat each A) -> R) throws -> CClosure {
        try CClosure(body)
    }

    /// Closures of seven and eight parameters, in the fixed-arity form the overloads choose and in pack
    /// form, made on each entry (the register path's and libffi's), as a `CClosure`, a slot and a `.stable`
    /// slot: C gets the closure's own result from each. Two take registers only (on x86_64 and aarch64),
    /// two have more integer arguments than the register path's five, one on the caller's stack on x86_64.
    @Test func sevenAndEightParametersInEachFormAgree() throws {
        let mixed7 = { @Sendable (a: Int32, b: Double, c: Int16, d: Float, e: Int64, f: Double, g: UInt8) -> UInt16 in
            UInt16(truncatingIfNeeded: Int64(a) &* 3 &+ Int64(c) &* 5 &+ e &* 7 &+ Int64(g) &- Int64(b * 2 + Double(d) * 4 + f * 8))
        }
        let doubles8 = { @Sendable (a: Double, b: Double, c: Double, d: Double, e: Double, f: Double, g: Double, h: Double) -> Double in
            let first: Double = a + b * 2 + c * 3 + d * 4
            return first + e * 5 + f * 6 + g * 7 + h * 8
        }
        let narrow8 = { @Sendable (a: Int8, b: UInt16, c: Int32, d: Int64, e: Float, f: Double, g: UInt8, p: UnsafeMutableRawPointer?) -> Int8 in
            let integers: Int64 = Int64(a) &* 3 &+ Int64(b) &* 5 &+ Int64(c) &* 7 &+ d &+ Int64(g) &* 11
            return Int8(truncatingIfNeeded: integers &+ Int64(e * 4) &+ Int64(f * 2) &+ Int64(Int(bitPattern: p)))
        }
        let integers8 = { @Sendable (a: Int64, b: Int64, c: Int64, d: Int64, e: Int64, f: Int64, g: Int64, h: Int64) -> Int64 in
            let first: Int64 = a &+ b &* 2 &+ c &* 3 &+ d &* 4
            return first &+ e &* 5 &+ f &* 6 &+ g &* 7 &+ h &* 8
        }
        let expected: (UInt16, Double, Int8, Int64) = (
            mixed7(-70000, 1.5, -300, 0.25, 1 << 40, -2.5, 250), doubles8(1, -2, 3.5, 4, -5, 6, 7.25, -8),
            narrow8(-3, 60000, -70000, -5_000_000_000, 1.5, -2.25, 200, UnsafeMutableRawPointer(bitPattern: 0x40)),
            integers8(1, -2, 3, -4, 5, -6, 7, 1 << 50))
        for libffiEntry in [false, true] {
            func made<T>(_ body: () throws -> T) rethrows -> T { libffiEntry ? try RegisterPath.withLibffiEntry(body) : try body() }
            for packForm in [false, true] {
                let closures = try made {
                    packForm
                        ? [try Self.packed(mixed7), try Self.packed(doubles8), try Self.packed(narrow8), try Self.packed(integers8)]
                        : [try CClosure(mixed7), try CClosure(doubles8), try CClosure(narrow8), try CClosure(integers8)]
                }
                let delegate = DynamicDelegate(protocol: ProtocolDescriptor(name: "many", methods: closures.enumerated().map {
                    MethodDescriptor(name: "f\($0.offset)", signature: $0.element.signature)
                }))
                try made {
                    try delegate.implement("f0", mixed7)
                    try delegate.implement("f1", doubles8)
                    try delegate.implement("f2", narrow8)
                    try delegate.implement("f3", integers8)
                }
                // Each closure once, with the slots of the delegate's first policy; then the `.stable` slots.
                for policy in [SlotPolicy.nullWhenUnimplemented, .stable] {
                    try delegate.setPolicy(policy)
                    let slots = (0..<4).map { delegate.table.load(fromByteOffset: $0 * MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self) }
                    for function in policy == .nullWhenUnimplemented ? [closures[0].address, slots[0]] : [slots[0]] {
                        let bytes = try callFromC(function, closures[0].signature, Int32(-70000), 1.5, Int16(-300), Float(0.25), Int64(1) << 40, -2.5, UInt8(250))
                        #expect(decode(bytes, as: UInt16.self) == expected.0, "mixed7, pack form \(packForm), libffi's entry \(libffiEntry), \(policy)")
                    }
                    for function in policy == .nullWhenUnimplemented ? [closures[1].address, slots[1]] : [slots[1]] {
                        let bytes = try callFromC(function, closures[1].signature, 1.0, -2.0, 3.5, 4.0, -5.0, 6.0, 7.25, -8.0)
                        #expect(decode(bytes, as: Double.self) == expected.1, "doubles8, pack form \(packForm), libffi's entry \(libffiEntry), \(policy)")
                    }
                    for function in policy == .nullWhenUnimplemented ? [closures[2].address, slots[2]] : [slots[2]] {
                        let bytes = try callFromC(
                            function, closures[2].signature, Int8(-3), UInt16(60000), Int32(-70000), Int64(-5_000_000_000), Float(1.5), -2.25,
                            UInt8(200), UnsafeMutableRawPointer(bitPattern: 0x40))
                        #expect(decode(bytes, as: Int8.self) == expected.2, "narrow8, pack form \(packForm), libffi's entry \(libffiEntry), \(policy)")
                        // libffi's closures widen a narrow result to a whole register word (as ffi_arg).
                        #expect(decode(bytes, as: Int64.self) == Int64(expected.2), "narrow8 widened, pack form \(packForm), libffi's entry \(libffiEntry), \(policy)")
                    }
                    for function in policy == .nullWhenUnimplemented ? [closures[3].address, slots[3]] : [slots[3]] {
                        let bytes = try callFromC(function, closures[3].signature, Int64(1), Int64(-2), Int64(3), Int64(-4), Int64(5), Int64(-6), Int64(7), Int64(1) << 50)
                        #expect(decode(bytes, as: Int64.self) == expected.3, "integers8, pack form \(packForm), libffi's entry \(libffiEntry), \(policy)")
                    }
                }
            }
        }
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

    /// What `sevenAndEightParametersInEachFormAgree` checks, in a release build, where the fixed-arity
    /// closures take their own forms (a debug build runs them in pack form): `delegatekit-trampolines
    /// arities`, on the call path this run takes.
    @Test func sevenAndEightParametersAgreeInAReleaseBuild() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-trampolines"), ["arities"])
        #expect(child.termination == .exit(0), "\(child.output)")
        let lines = child.output.split(separator: "\n")
        // 4 closures, each in 2 forms, as a closure, a slot and a `.stable` slot.
        #expect(lines.count == 4 * 2 * 3, "\(child.output)")
        #expect(lines.allSatisfy { $0.hasSuffix(": right") }, "\(child.output)")
        let entry = RegisterPath.isAvailable ? "registers" : "libffi"  // the child inherits DELEGATEKIT_FAST_PATH
        #expect(lines.filter { $0.hasPrefix("doubles8 fixed arity closure ") } == ["doubles8 fixed arity closure \(entry): right"])
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
