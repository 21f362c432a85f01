import DelegateKit
import DelegateKitFixtures
import Glibc
import Testing

/// Closures with every shape of signature, called from C the way a C library calls a function
/// pointer; each result is checked against the same formula computed in C and in Swift.
@Suite struct SignatureMatrixTests {
    /// Calls `f(a, b)` from C through a closure computing `formula`, and checks the C reference and the
    /// Swift formula agree with what came back.
    func check<T: CValue & Equatable>(
        _ a: T, _ b: T, _ formula: @escaping @Sendable (T, T) -> T,
        call: (UnsafeRawPointer?, T, T) -> T, reference: (T, T) -> T,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let closure = try CClosure { (x: T, y: T) -> T in formula(x, y) }
        #expect(closure.signature == CSignature(T.cType, [T.cType, T.cType]), sourceLocation: sourceLocation)
        let viaC = call(closure.address, a, b)
        #expect(viaC == reference(a, b), sourceLocation: sourceLocation)
        #expect(viaC == formula(a, b), sourceLocation: sourceLocation)
    }

    @Test func everyScalarAsArgumentAndReturn() throws {
        try check(true, false, { $0 != $1 }, call: fx_call_bool, reference: fx_ref_bool)
        try check(true, true, { $0 != $1 }, call: fx_call_bool, reference: fx_ref_bool)
        // Narrow negative results check sign extension; narrow large unsigned ones zero extension.
        try check(Int8(-100), 27, { $0 &- $1 }, call: fx_call_i8, reference: fx_ref_i8)
        try check(UInt8(3), 200, { $0 &- $1 }, call: fx_call_u8, reference: fx_ref_u8)
        try check(Int16(-30000), 2767, { $0 &- $1 }, call: fx_call_i16, reference: fx_ref_i16)
        try check(UInt16(5), 65000, { $0 &- $1 }, call: fx_call_u16, reference: fx_ref_u16)
        try check(Int32(-2_000_000_000), 147_483_648, { $0 &- $1 }, call: fx_call_i32, reference: fx_ref_i32)
        try check(UInt32(7), 4_000_000_000, { $0 &- $1 }, call: fx_call_u32, reference: fx_ref_u32)
        try check(Int64.min + 5, 3, { $0 &- $1 }, call: fx_call_i64, reference: fx_ref_i64)
        try check(UInt64(1), UInt64.max, { $0 &- $1 }, call: fx_call_u64, reference: fx_ref_u64)
        try check(Float(1.5), -2.25, { $0 - $1 }, call: fx_call_f32, reference: fx_ref_f32)
        try check(Double(1e300), -0.5, { $0 - $1 }, call: fx_call_f64, reference: fx_ref_f64)
        #if arch(x86_64)  // `long double` as `Float80` is x86_64 only.
        // 1 + 2^-63 needs long double's 64-bit significand: a double would round it to 1.
        let tiny = Float80(sign: .plus, exponent: -63, significand: 1)
        try check(Float80(1) + tiny, -tiny, { $0 - $1 }, call: fx_call_ld, reference: fx_ref_ld)
        #expect(fx_ref_ld(Float80(1) + tiny, 0) != 1)
        #endif

        let base = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16)
        defer { base.deallocate() }
        let offset = UnsafeMutableRawPointer(bitPattern: 0x1234_5678_9A37)
        let pointerClosure = try CClosure { (a: UnsafeMutableRawPointer?, b: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in
            a! + Int(UInt(bitPattern: b) & 0xff)
        }
        let viaC = fx_call_ptr(pointerClosure.address, base, offset)
        #expect(viaC == fx_ref_ptr(base, offset))
        #expect(viaC == base + 0x37)
    }

    @Test func sixteenMixedArguments() throws {
        let closure = try CClosure {
            (a1: Int8, a2: Double, a3: Int16, a4: Float, a5: Int32, a6: Double, a7: Int64, a8: Float,
             a9: UInt8, a10: Double, a11: UInt16, a12: Float, a13: UInt32, a14: Double, a15: UInt64, a16: Float) -> Double in
            let integers = [Double(a1), Double(a3), Double(a5), Double(a7), Double(a9), Double(a11), Double(a13), Double(a15)]
            let floats = [a2, Double(a4), a6, Double(a8), a10, Double(a12), a14, Double(a16)]
            var sum = 0.0
            for i in 0..<8 { sum += integers[i] * Double(2 * i + 1) + floats[i] * Double(2 * i + 2) }
            return sum
        }
        #expect(closure.signature.argumentTypes.count == 16)
        let integers: [Double] = [-7, -300, -70000, -5_000_000_000, 200, 60000, 4_000_000_000, 9_000_000_000]
        let floats: [Double] = [1.5, 2.25, -3.125, 4.5, 0.0625, -8.75, 1024.5, 0.5]
        var swiftSide = 0.0
        for i in 0..<8 { swiftSide += integers[i] * Double(2 * i + 1) + floats[i] * Double(2 * i + 2) }
        #expect(fx_call_many16(closure.address) == fx_ref_many16())
        #expect(fx_ref_many16() == swiftSide)
    }

    @Test func twentyArgumentsSpillBothRegisterFiles() throws {
        let closure = try CClosure {
            (i1: Int64, d1: Double, i2: Int64, d2: Double, i3: Int64, d3: Double, i4: Int64, d4: Double,
             i5: Int64, d5: Double, i6: Int64, d6: Double, i7: Int64, d7: Double, i8: Int64, d8: Double,
             i9: Int64, d9: Double, i10: Int64, d10: Double) -> Double in
            let ints = [i1, i2, i3, i4, i5, i6, i7, i8, i9, i10]
            let doubles = [d1, d2, d3, d4, d5, d6, d7, d8, d9, d10]
            var sum = 0.0
            for i in 0..<10 { sum += Double(ints[i]) * Double(2 * i + 1) + doubles[i] * Double(2 * i + 2) }
            return sum
        }
        let ints: [Double] = [1, -2, 3, -4, 5, -6, 7, -8, 9, -10]
        let doubles = [0.5, 1.5, -2.5, 3.5, 4.5, -5.5, 6.5, 7.5, -8.5, 9.5]
        var swiftSide = 0.0
        for i in 0..<10 { swiftSide += ints[i] * Double(2 * i + 1) + doubles[i] * Double(2 * i + 2) }
        #expect(fx_call_spill20(closure.address) == fx_ref_spill20())
        #expect(fx_ref_spill20() == swiftSide)
    }

    @Test func sixMixedArguments() throws {
        let marker = UnsafeMutableRawPointer(bitPattern: 0x5000)!  // @Sendable closures compare addresses, not pointers
        let closure = try CClosure {
            (p: UnsafeMutableRawPointer?, a: Int32, b: Int64, c: Double, d: Float, q: UnsafeMutableRawPointer?) -> Int32 in
            guard UInt(bitPattern: p) == 0x5000, q == nil else { return -1 }
            return a + Int32(b / 1000) + Int32(c * 4) + Int32(d * 2)
        }
        #expect(fx_call_mixed6(closure.address, marker, 5, 7000, 2.5, 1.5, nil) == 5 + 7 + 10 + 3)
    }

    @Test(arguments: structCases) func structsByValue(_ structCase: StructCase) throws {
        try structCase.run()
    }

    @Test func dynamicClosureServesTheWholeMatrixToo() throws {
        // The same struct formula, with the signature known only at run time.
        let closure = try CClosure(signature: CSignature(N2.cType, [N2.cType, N2.cType])) { invocation in
            invocation.setReturnValue(combined(invocation.argument(0, as: N2.self), invocation.argument(1, as: N2.self)))
        }
        let a = sample(N2.self, seed: 11), b = sample(N2.self, seed: 12)
        var count = 0
        let fields = Array(UnsafeBufferPointer(start: fx_fields_N2(&count), count: count))
        #expect(sameFields(fx_call_N2(closure.address, a, b), fx_ref_N2(a, b), fields: fields))

        let narrow = try CClosure(signature: CSignature(.int8, [.int8, .int8])) { invocation in
            invocation.setReturnValue(invocation.argument(0, as: Int8.self) &- invocation.argument(1, as: Int8.self))
        }
        #expect(fx_call_i8(narrow.address, -100, 27) == -127)
    }

    /// Structs in and out of a run-time closure as bytes, with no Swift type stating their layout: the
    /// layout is the signature's, parsed from C.
    @Test func dynamicClosureReadsAndReturnsStructsAsBytes() throws {
        // `SPair`: { uint8_t tag; double value; }, the tags added and the values multiplied.
        let pair = try CSignature(parsing: "struct pair (struct pair, struct pair)", typedefs: ["struct pair": .structure([.uint8, .double])])
        let combine = try CClosure(signature: pair) { invocation in
            let a = invocation.argumentBytes(0), b = invocation.argumentBytes(1)
            #expect(a.count == 16 && b.count == 16)
            var result = [UInt8](repeating: 0, count: 16)
            result[0] = a[0] &+ b[0]
            let value = a.loadUnaligned(fromByteOffset: 8, as: Double.self) * b.loadUnaligned(fromByteOffset: 8, as: Double.self)
            withUnsafeBytes(of: value) { result.replaceSubrange(8..<16, with: $0) }
            result.withUnsafeBytes { invocation.setReturnBytes($0) }
        }
        let combined = fx_call_SPair(combine.address, SPair(tag: 2, value: 1.5), SPair(tag: 3, value: -4))
        #expect(combined.tag == 5 && combined.value == -6)

        // `N2`, nested and 32 bytes: the second argument handed back whole.
        let second = try CClosure(signature: CSignature(N2.cType, [N2.cType, N2.cType])) { invocation in
            invocation.setReturnBytes(invocation.argumentBytes(1))
        }
        let a = sample(N2.self, seed: 3), b = sample(N2.self, seed: 4)
        var count = 0
        let fields = Array(UnsafeBufferPointer(start: fx_fields_N2(&count), count: count))
        #expect(sameFields(fx_call_N2(second.address, a, b), b, fields: fields))

        // A narrow integer set by its one byte is widened as libffi widens it.
        let narrow = try CClosure(signature: CSignature(.int8, [.int8, .int8])) { invocation in
            let difference = invocation.argumentBytes(0).load(as: Int8.self) &- invocation.argumentBytes(1).load(as: Int8.self)
            withUnsafeBytes(of: difference) { invocation.setReturnBytes($0) }
        }
        #expect(fx_call_i8(narrow.address, -100, 27) == -127)
    }
}

/// One struct of the fixture, run through a closure from C.
struct StructCase: Sendable, CustomStringConvertible {
    let description: String
    let run: @Sendable () throws -> Void
    /// Calls `fx_ref_<S>` from Swift through a ``CFunction``, typed and with run-time values, by the call's
    /// plan and through `ffi_call`; each result against the direct call (``CallPlanTests``).
    let callIntoC: @Sendable () throws -> Void

    init<S: CValue>(
        _ type: S.Type,
        call: @escaping @Sendable (UnsafeRawPointer?, S, S) -> S, reference: @escaping @Sendable (S, S) -> S,
        fields: @escaping @Sendable (UnsafeMutablePointer<Int>?) -> UnsafePointer<fx_field>?,
        size: @escaping @Sendable () -> Int, alignment: @escaping @Sendable () -> Int
    ) {
        description = "\(S.self)"
        callIntoC = {
            var count = 0
            let table = Array(UnsafeBufferPointer(start: fields(&count), count: count))
            try CallPlanTests.agree(S.self, name: "fx_ref_\(S.self)", reference: reference, fields: table)
        }
        run = {
            var count = 0
            let table = Array(UnsafeBufferPointer(start: fields(&count), count: count))
            // DelegateKit's layout of the stated C type is the C compiler's.
            #expect(S.cType.size == size() && S.cType.alignment == alignment(), "\(S.self) size/alignment")
            let ours = leaves(of: S.cType).map(\.offset)
            #expect(ours == table.map(\.offset), "\(S.self) field offsets")

            let closure = try CClosure { (a: S, b: S) -> S in combined(a, b) }
            for seed in 1...4 as ClosedRange<UInt64> {
                let a = sample(S.self, seed: seed), b = sample(S.self, seed: seed + 100)
                let viaC = call(closure.address, a, b)
                #expect(sameFields(viaC, reference(a, b), fields: table), "\(S.self) via C vs C reference, seed \(seed)")
                #expect(sameFields(viaC, combined(a, b), fields: table), "\(S.self) via C vs Swift, seed \(seed)")
            }
        }
    }
}

let structCases: [StructCase] = [
    StructCase(S1.self, call: fx_call_S1, reference: fx_ref_S1, fields: fx_fields_S1, size: fx_sizeof_S1, alignment: fx_alignof_S1),
    StructCase(S2.self, call: fx_call_S2, reference: fx_ref_S2, fields: fx_fields_S2, size: fx_sizeof_S2, alignment: fx_alignof_S2),
    StructCase(S3.self, call: fx_call_S3, reference: fx_ref_S3, fields: fx_fields_S3, size: fx_sizeof_S3, alignment: fx_alignof_S3),
    StructCase(S4.self, call: fx_call_S4, reference: fx_ref_S4, fields: fx_fields_S4, size: fx_sizeof_S4, alignment: fx_alignof_S4),
    StructCase(S5.self, call: fx_call_S5, reference: fx_ref_S5, fields: fx_fields_S5, size: fx_sizeof_S5, alignment: fx_alignof_S5),
    StructCase(S6.self, call: fx_call_S6, reference: fx_ref_S6, fields: fx_fields_S6, size: fx_sizeof_S6, alignment: fx_alignof_S6),
    StructCase(S7.self, call: fx_call_S7, reference: fx_ref_S7, fields: fx_fields_S7, size: fx_sizeof_S7, alignment: fx_alignof_S7),
    StructCase(S8.self, call: fx_call_S8, reference: fx_ref_S8, fields: fx_fields_S8, size: fx_sizeof_S8, alignment: fx_alignof_S8),
    StructCase(SFF.self, call: fx_call_SFF, reference: fx_ref_SFF, fields: fx_fields_SFF, size: fx_sizeof_SFF, alignment: fx_alignof_SFF),
    StructCase(S12.self, call: fx_call_S12, reference: fx_ref_S12, fields: fx_fields_S12, size: fx_sizeof_S12, alignment: fx_alignof_S12),
    StructCase(SDD.self, call: fx_call_SDD, reference: fx_ref_SDD, fields: fx_fields_SDD, size: fx_sizeof_SDD, alignment: fx_alignof_SDD),
    StructCase(SLD16.self, call: fx_call_SLD16, reference: fx_ref_SLD16, fields: fx_fields_SLD16, size: fx_sizeof_SLD16, alignment: fx_alignof_SLD16),
    StructCase(SPair.self, call: fx_call_SPair, reference: fx_ref_SPair, fields: fx_fields_SPair, size: fx_sizeof_SPair, alignment: fx_alignof_SPair),
    StructCase(S17.self, call: fx_call_S17, reference: fx_ref_S17, fields: fx_fields_S17, size: fx_sizeof_S17, alignment: fx_alignof_S17),
    StructCase(S24.self, call: fx_call_S24, reference: fx_ref_S24, fields: fx_fields_S24, size: fx_sizeof_S24, alignment: fx_alignof_S24),
    StructCase(S32.self, call: fx_call_S32, reference: fx_ref_S32, fields: fx_fields_S32, size: fx_sizeof_S32, alignment: fx_alignof_S32),
    StructCase(S33.self, call: fx_call_S33, reference: fx_ref_S33, fields: fx_fields_S33, size: fx_sizeof_S33, alignment: fx_alignof_S33),
    StructCase(S64.self, call: fx_call_S64, reference: fx_ref_S64, fields: fx_fields_S64, size: fx_sizeof_S64, alignment: fx_alignof_S64),
    StructCase(N1.self, call: fx_call_N1, reference: fx_ref_N1, fields: fx_fields_N1, size: fx_sizeof_N1, alignment: fx_alignof_N1),
    StructCase(N2.self, call: fx_call_N2, reference: fx_ref_N2, fields: fx_fields_N2, size: fx_sizeof_N2, alignment: fx_alignof_N2),
    StructCase(N3.self, call: fx_call_N3, reference: fx_ref_N3, fields: fx_fields_N3, size: fx_sizeof_N3, alignment: fx_alignof_N3),
    StructCase(SLongDouble.self, call: fx_call_SLongDouble, reference: fx_ref_SLongDouble, fields: fx_fields_SLongDouble,
               size: fx_sizeof_SLongDouble, alignment: fx_alignof_SLongDouble),
]

/// The fixture's formula in Swift: field-wise a + b, integers wrapping.
func combine(_ type: CType, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
    for (offset, leaf) in leaves(of: type) {
        let x = a + offset, y = b + offset, r = out + offset
        switch leaf {
        case .uint8: r.storeBytes(of: x.load(as: UInt8.self) &+ y.load(as: UInt8.self), as: UInt8.self)
        case .uint16: r.storeBytes(of: x.loadUnaligned(as: UInt16.self) &+ y.loadUnaligned(as: UInt16.self), as: UInt16.self)
        case .int32: r.storeBytes(of: x.loadUnaligned(as: Int32.self) &+ y.loadUnaligned(as: Int32.self), as: Int32.self)
        case .int64: r.storeBytes(of: x.loadUnaligned(as: Int64.self) &+ y.loadUnaligned(as: Int64.self), as: Int64.self)
        case .float: r.storeBytes(of: x.loadUnaligned(as: Float.self) + y.loadUnaligned(as: Float.self), as: Float.self)
        case .double: r.storeBytes(of: x.loadUnaligned(as: Double.self) + y.loadUnaligned(as: Double.self), as: Double.self)
        case .longDouble: fx_long_double_add(x, y, r)  // in C: Swift has a `long double` on x86_64 only
        default: fatalError("the fixture has no \(leaf) fields")
        }
    }
}

func combined<S: CValue>(_ a: S, _ b: S) -> S {
    var result = a
    withUnsafeBytes(of: a) { x in
        withUnsafeBytes(of: b) { y in
            withUnsafeMutableBytes(of: &result) { r in
                combine(S.cType, x.baseAddress!, y.baseAddress!, into: r.baseAddress!)
            }
        }
    }
    return result
}

/// A value of `S` whose every field holds a seeded, exactly representable number (no NaNs, so
/// floating-point fields compare exactly).
func sample<S: CValue>(_ type: S.Type, seed: UInt64) -> S {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    func next() -> Int64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int64(bitPattern: state)
    }
    let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<S>.stride, alignment: MemoryLayout<S>.alignment)
    defer { raw.deallocate() }
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<S>.stride)
    for (offset, leaf) in leaves(of: S.cType) {
        let r = raw + offset
        let n = next()
        switch leaf {
        case .uint8: r.storeBytes(of: UInt8(truncatingIfNeeded: n), as: UInt8.self)
        case .uint16: r.storeBytes(of: UInt16(truncatingIfNeeded: n), as: UInt16.self)
        case .int32: r.storeBytes(of: Int32(truncatingIfNeeded: n), as: Int32.self)
        case .int64: r.storeBytes(of: n, as: Int64.self)
        case .float: r.storeBytes(of: Float(n % 4096) / 4, as: Float.self)
        case .double: r.storeBytes(of: Double(n % 1_000_000) / 8, as: Double.self)
        case .longDouble: fx_long_double_store(r, n)
        default: fatalError("the fixture has no \(leaf) fields")
        }
    }
    return raw.load(as: S.self)
}

/// Whether two values agree on every field the fixture lists (padding bytes are not compared: C does
/// not promise to keep them through a call).
func sameFields<S>(_ a: S, _ b: S, fields: [fx_field]) -> Bool {
    withUnsafeBytes(of: a) { x in
        withUnsafeBytes(of: b) { y in
            fields.allSatisfy { field in
                let size: Int = switch field.kind {
                case FX_U8: 1
                case FX_U16: 2
                case FX_I32, FX_F32: 4
                case FX_I64, FX_F64: 8
                default: fx_long_double_value_bytes()  // x87's 16 bytes hold 10 of value
                }
                return memcmp(x.baseAddress! + field.offset, y.baseAddress! + field.offset, size) == 0
            }
        }
    }
}
