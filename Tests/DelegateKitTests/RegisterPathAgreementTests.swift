@testable import DelegateKit  // PreparedSignature (libffi's ffi_call, as a C caller) and RegisterPath
import DelegateKitFixtures
import Glibc
import Testing

/// The register path and libffi's path do one job: for every shape of signature, a closure, a slot and
/// a stack made each way must hand a C caller the same bytes. Each case is called through libffi's
/// `ffi_call` (a C caller for any signature), once per path, in one process.
@Suite struct RegisterPathAgreementTests {
    /// A C type stated by a struct whose Swift type does not say it is floating point: its closures
    /// enter in register form but run through the argument array (the general adapter).
    struct Meters: CValue, Equatable {
        var value: Double
        static var cType: CType { .double }
    }

    /// An integer-class struct: converted from registers by its layout.
    struct Code: CValue, Equatable {
        var raw: Int32
        static var cType: CType { .int32 }
    }

    /// Whether C entering `address` reaches a register entry: a slot of the trampoline table that loads
    /// the register entries' context register, not the static-chain register libffi's closures take.
    func entersInRegisters(_ address: UnsafeRawPointer) -> Bool {
        fx_code_kind(address) == 1
    }

    func descriptor(_ signature: CSignature) -> ProtocolDescriptor {
        ProtocolDescriptor(name: "one", methods: [MethodDescriptor(name: "f", signature: signature)])
    }

    func slotFunction(_ delegate: DynamicDelegate) -> UnsafeRawPointer { delegate.table.load(as: UnsafeRawPointer.self) }

    /// Checks a two-argument closure: a `CClosure`, a slot and a slot with an override calling `next`, made
    /// on each path, all give C the closure's result.
    func agree<A0: CValue, A1: CValue, R: CValue & Equatable>(
        _ body: @escaping @Sendable (A0, A1) -> R, _ a0: A0, _ a1: A1, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        let expected = body(a0, a1)
        let fast = try CClosure(body)
        // In a debug build `fast` calls the closure through its most general form (``OpaqueBody``); this one
        // converts each argument by its Swift type, as an optimized build does.
        let typed = try OpaqueBody.withoutOpaqueCalls { try CClosure(body) }
        let slow = try RegisterPath.withLibffiEntry { try CClosure(body) }
        let signature = fast.signature
        let takesRegisters = try RegisterPath.isAvailable && PreparedSignature.prepared(signature).takesRegisters
        #expect(entersInRegisters(fast.address) == takesRegisters, sourceLocation: sourceLocation)
        #expect(!entersInRegisters(slow.address), sourceLocation: sourceLocation)

        func delegates(override: Bool) throws -> [DynamicDelegate] {
            func make() throws -> DynamicDelegate {
                let delegate = DynamicDelegate(protocol: descriptor(signature))
                try delegate.implement("f", body)
                if override { try delegate.override("f") { (next: Next<A0, A1, R>, a: A0, b: A1) -> R in next(a, b) } }
                return delegate
            }
            return [try make(), try RegisterPath.withLibffiEntry { try make() }, try OpaqueBody.withoutOpaqueCalls { try make() }]
        }
        let plain = try delegates(override: false)
        let stacked = try delegates(override: true)
        #expect(entersInRegisters(slotFunction(plain[0])) == takesRegisters, sourceLocation: sourceLocation)
        #expect(!entersInRegisters(slotFunction(plain[1])), sourceLocation: sourceLocation)

        // Every closure and delegate alive until the last call: an optimized build may release each after
        // its last use, which taking its address is.
        try withExtendedLifetime((fast, typed, slow, plain, stacked)) {
            let viaFast = try callFromC(fast.address, signature, a0, a1)
            #expect(decode(viaFast, as: R.self) == expected, sourceLocation: sourceLocation)
            for function in [typed.address, slow.address] + (plain + stacked).map(slotFunction) {
                #expect(try callFromC(function, signature, a0, a1) == viaFast, sourceLocation: sourceLocation)
            }
        }
    }

    /// What `make` makes in each form a closure can take here: the default (in a debug build, the register
    /// form calls the closure through its most general form, ``OpaqueBody``), converting each argument by
    /// its Swift type (an optimized build's form), and through libffi.
    static func eachForm<T>(_ make: () throws -> T) throws -> [T] {
        [try make(), try OpaqueBody.withoutOpaqueCalls(make), try RegisterPath.withLibffiEntry(make)]
    }

    /// In a debug build, where nothing is specialized, every typed closure's register form is one piece
    /// of code (the body calling `cffi_call_opaque`), whatever its signature; converting by Swift type
    /// makes a body of its own; an optimized build never takes the first. (Without the register path no
    /// closure has a register form.)
    @Test(.enabled(if: RegisterPath.isAvailable)) func debugBuildsCallTypedClosuresInTheirMostGeneralForm() throws {
        let bias = Int64(getpid() & 0)
        let add = try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
        let scale = try CClosure { (a: Double, b: Float, c: Int8) -> Double in a * Double(b) + Double(c) }
        let typed = try OpaqueBody.withoutOpaqueCalls { try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias } }
        let code = { (closure: CClosure) in UInt(bitPattern: closure.registers.words.code) }
        #if DEBUG
        #expect(code(add) == code(scale))
        #expect(code(add) != code(typed))
        #else
        #expect(code(add) != code(scale))
        #expect(code(add) == code(typed))  // the converting form is an optimized build's only one
        #endif
        #expect(fx_call_i64(add.address, 40, 2) == 42 && fx_call_i64(typed.address, 40, 2) == 42)
    }

    /// Code entering the shared register body entry has the closure's own register form as its context:
    /// the two words at ``CClosure/registersOffset`` in the closure object, which are that form's. (A
    /// wrong offset is a call of whatever lies there.) A run-time signature's closure enters there in
    /// both builds, a typed one without an opaque call in both, and each still answers.
    @Test(.enabled(if: RegisterPath.isAvailable)) func theBodyEntryReadsTheRegisterFormInsideTheClosure() throws {
        let bias = Int64(getpid() & 0)
        let dynamic = try CClosure(signature: CSignature(.int64, [.int64, .int64])) { invocation in
            invocation.setReturnValue(invocation.argument(0, as: Int64.self) &+ invocation.argument(1, as: Int64.self) &+ bias)
        }
        let typed = try OpaqueBody.withoutOpaqueCalls { try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias } }
        for closure in [dynamic, typed] {
            let object = Unmanaged.passUnretained(closure).toOpaque()
            #expect(closure.code.userData == object + CClosure.registersOffset)
            let words = object.load(fromByteOffset: CClosure.registersOffset, as: (UnsafeRawPointer, UnsafeRawPointer?).self)
            #expect(words.0 == closure.registers.words.code && words.1 == closure.registers.words.context)
            #expect(fx_call_i64(closure.address, 40, 2) == 42)
        }
    }

    /// CI runs the suite twice, the second time with `DELEGATEKIT_FAST_PATH=0`: this is what makes that
    /// second run exercise libffi's path, and the first the register path wherever the README says it runs
    /// (``ExpectedRegisterPath``), whatever libffi CI's machine, chroot or emulator has.
    @Test func theSwitchDecidesThePath() throws {
        let forcedOff = getenv("DELEGATEKIT_FAST_PATH").map { String(cString: $0) == "0" } ?? false
        #expect(RegisterPath.isAvailable == (!forcedOff && ExpectedRegisterPath.onThisCPU))
        let closure = try CClosure { (a: Int64, b: Int64) -> Int64 in a &* b }
        #expect(entersInRegisters(closure.address) == RegisterPath.isAvailable)
        #expect(fx_code_kind(closure.address) == (RegisterPath.isAvailable ? 1 : 2))
        #expect(fx_call_i64(closure.address, 6, -7) == -42)
    }

    /// A closure's register form is entered by the shared assembly entry (`cffi_enter_register_body`),
    /// which calls its body with no Swift frame between: what the closures of every kind of register-only
    /// signature take, and what the libffi path, an exiting closure and a shape with its own entry do not.
    /// A closure called through its most general form (a typed closure in a debug build, one of more than
    /// eight parameters in any build) enters that call's assembly itself (`cffi_call_opaque`); one of seven
    /// or eight takes a typed closure's entry.
    @Test func closuresEnterTheirBodiesThroughTheSharedEntry() throws {
        let shared = unsafeBitCast(TrampolineShim.bodyEntry.integer, to: UnsafeRawPointer.self)
        let opaque = unsafeBitCast(TrampolineShim.opaqueEntry.integer, to: UnsafeRawPointer.self)
        #if DEBUG
        let typedEntry = opaque
        #else
        let typedEntry = shared
        #endif
        let bias = Int64(getpid() & 0)  // Not known to the compiler: the closures capture something.
        let add = try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
        let scale = try CClosure { (a: Double, b: Double) -> Double in a * b + Double(bias) }
        let mixed = try CClosure { (p: UnsafeMutableRawPointer?, a: Int32, b: Int64, c: Double, d: Float, q: UnsafeMutableRawPointer?) -> Int32 in
            a &+ Int32(b) &+ Int32(c) &+ Int32(d) &+ (p == nil && q == nil ? 1 : 0)
        }
        let dynamic = try CClosure(signature: CSignature(.int64, [.int64, .int64])) { invocation in
            invocation.setReturnValue(invocation.argument(0, as: Int64.self) &- invocation.argument(1, as: Int64.self))
        }
        let converting = try OpaqueBody.withoutOpaqueCalls { try CClosure { (a: Int64, b: Int64) -> Int64 in a &- b &+ bias } }
        let seven: @Sendable (Double, Double, Double, Double, Double, Double, Double) -> Double = { a, b, c, d, e, f, g in
            [a, b, c, d, e, f, g].reduce(0, +)
        }
        let nine: @Sendable (Int64, Int64, Int64, Int64, Int64, Double, Double, Double, Double) -> Double = { a, b, c, d, e, f, g, h, i in
            Double(a &+ b &+ c &+ d &+ e) + [f, g, h, i].reduce(0, +)
        }
        let fixed = try CClosure(seven), pack = try CClosure(nine)
        for (closure, entry) in [(add, typedEntry), (scale, typedEntry), (mixed, typedEntry), (dynamic, shared), (converting, shared), (fixed, typedEntry), (pack, opaque)] {
            #expect(fx_code_kind(closure.address) == (RegisterPath.isAvailable ? 1 : 2))
            #expect((fx_slot_entry(closure.address) == entry) == RegisterPath.isAvailable, "\(closure.signature)")
        }
        #expect(fx_call_i64(converting.address, 44, 2) == 42)
        #expect(fx_call_i64(add.address, 40, 2) == 42)
        #expect(fx_call_f64(scale.address, 1.5, -4) == -6)
        #expect(fx_call_mixed6(mixed.address, nil, 1, 2, 3.5, 4.25, nil) == 11)
        #expect(fx_call_i64(dynamic.address, 50, 8) == 42)

        let exiting = try CClosure { (a: Int64, b: Int64) throws -> Int64 in a &+ b }
        let comparator = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in a == b ? 0 : 1 }
        #expect(fx_code_kind(exiting.address) == (RegisterPath.isAvailable ? 1 : 2))
        #expect(fx_slot_entry(exiting.address) != shared && fx_slot_entry(comparator.address) != shared)
        #expect(fx_call_i64(exiting.address, 40, 2) == 42)
    }

    @Test func everyScalarAgrees() throws {
        try agree({ (a: Bool, b: Bool) -> Bool in a != b }, true, false)
        try agree({ (a: Int8, b: Int8) -> Int8 in a &- b }, -100, 27)
        try agree({ (a: UInt8, b: UInt8) -> UInt8 in a &- b }, 3, 200)
        try agree({ (a: Int16, b: Int16) -> Int16 in a &- b }, -30000, 2767)
        try agree({ (a: UInt16, b: UInt16) -> UInt16 in a &- b }, 5, 65000)
        try agree({ (a: Int32, b: Int32) -> Int32 in a &- b }, -2_000_000_000, 147_483_648)
        try agree({ (a: UInt32, b: UInt32) -> UInt32 in a &- b }, 7, 4_000_000_000)
        try agree({ (a: Int64, b: Int64) -> Int64 in a &- b }, .min + 5, 3)
        try agree({ (a: UInt64, b: UInt64) -> UInt64 in a &- b }, 1, .max)
        try agree({ (a: Int, b: UInt) -> Int in a &+ Int(bitPattern: b) }, -9, 4)
        try agree({ (a: Float, b: Float) -> Float in a - b }, 1.5, -2.25)
        try agree({ (a: Double, b: Double) -> Double in a - b }, 1e300, -0.5)
        try agree({ (a: Float, b: Int8) -> Double in Double(a) * Double(b) }, 0.375, -3)
        try agree({ (a: Int16, b: Double) -> Float in Float(a) + Float(b) }, -7, 0.25)
        let base = UnsafeMutableRawPointer(bitPattern: 0x7000_0000_1000)
        try agree({ (a: UnsafeMutableRawPointer?, b: Int) -> UnsafeMutableRawPointer? in a! + b }, base, 0x37)
        try agree({ (a: OpaquePointer?, b: UInt8) -> Bool in a == nil && b == 9 }, OpaquePointer?.none, 9)
        #if arch(x86_64)  // `long double` as `Float80` is x86_64 only.
        // A long double travels on the stack: both closures enter through libffi.
        try agree({ (a: Float80, b: Float80) -> Float80 in a - b }, 1.5, 0.25)
        #endif
    }

    @Test func statedTypesAgreeThroughTheAdapterToo() throws {
        try agree({ (a: Meters, b: Code) -> Meters in Meters(value: a.value * Double(b.raw)) }, Meters(value: 2.5), Code(raw: -4))
        try agree({ (a: Code, b: Meters) -> Code in Code(raw: a.raw &+ Int32(b.value)) }, Code(raw: 40), Meters(value: 2))
    }

    @Test func sixArgumentsInEveryRegisterMix() throws {
        let mixed = { @Sendable (a: Double, b: Int32, c: Float, d: Int64, e: Double, f: UInt8) -> Float in
            Float(a) + Float(b) * 2 + c * 3 + Float(d) * 4 + Float(e) * 5 + Float(f) * 6
        }
        let sig = CSignature(.float, [.double, .int32, .float, .int64, .double, .uint8])
        for closure in try Self.eachForm({ try CClosure(mixed) }) {
            let bytes = try callFromC(closure.address, sig, 1.5, Int32(-2), Float(0.5), Int64(7), 0.125, UInt8(200))
            #expect(decode(bytes, as: Float.self) == mixed(1.5, -2, 0.5, 7, 0.125, 200))
        }
        // Five integers and a double: the most a register closure takes of integers.
        let fiveIntegers = { @Sendable (a: Int64, b: Int32, c: Int16, d: Int8, e: UInt64, f: Double) -> Double in
            Double(a) + Double(b) * 10 + Double(c) * 100 + Double(d) * 1000 + Double(e) * 3 + f
        }
        // Six integers: the sixth would need the register the context takes, so both enter through libffi.
        let sixIntegers = { @Sendable (a: Int64, b: Int32, c: Int16, d: Int8, e: UInt64, f: Int64) -> Int64 in
            a &+ Int64(b) &* 10 &+ Int64(c) &* 100 &+ Int64(d) &* 1000 &+ Int64(bitPattern: e) &* 3 &+ f &* 7
        }
        let sixDoubles = { @Sendable (a: Double, b: Float, c: Double, d: Float, e: Double, f: Float) -> Double in
            a + Double(b) * 2 + c * 3 + Double(d) * 4 + e * 5 + Double(f) * 6
        }
        let fives = try Self.eachForm { try CClosure(fiveIntegers) }
        let sixes = try Self.eachForm { try CClosure(sixIntegers) }
        let doubles = try Self.eachForm { try CClosure(sixDoubles) }
        #expect(entersInRegisters(fives[0].address) == RegisterPath.isAvailable)
        #expect(!entersInRegisters(sixes[0].address))
        #expect(entersInRegisters(doubles[0].address) == RegisterPath.isAvailable)
        let five = (Int64(-3), Int32(44), Int16(-5), Int8(6), UInt64(1) << 40, 0.5)
        for closure in fives {
            let bytes = try callFromC(closure.address, closure.signature, five.0, five.1, five.2, five.3, five.4, five.5)
            #expect(decode(bytes, as: Double.self) == fiveIntegers(five.0, five.1, five.2, five.3, five.4, five.5))
        }
        for closure in sixes {
            let bytes = try callFromC(closure.address, closure.signature, Int64(1), Int32(-2), Int16(3), Int8(-4), UInt64.max, Int64(9))
            #expect(decode(bytes, as: Int64.self) == sixIntegers(1, -2, 3, -4, .max, 9))
        }
        for closure in doubles {
            let bytes = try callFromC(closure.address, closure.signature, 1.0, Float(2), 3.0, Float(4), 5.0, Float(6))
            #expect(decode(bytes, as: Double.self) == sixDoubles(1, 2, 3, 4, 5, 6))
        }
    }

    /// Past six parameters a typed closure runs in pack form (`PackFunction`): entered in registers, the
    /// registers' addresses are handed over as an array, as libffi's entry hands them. Every register a
    /// register-only signature can take, narrow types among them, on both paths, as a closure and a slot.
    @Test func thirteenArgumentsInPackFormAgree() throws {
        let thirteen = { @Sendable (
            a: Int8, b: Double, c: Int16, d: Float, e: Int32, f: Double, g: UInt8, h: Float, i: Int64, j: Double, k: Float, l: Double,
            m: Float
        ) -> Int16 in
            let integers = Int64(a) &* 3 &+ Int64(c) &* 5 &+ Int64(e) &* 7 &+ Int64(g) &* 11 &+ i &* 13
            let floating = b + Double(d) * 2 + f * 3 + Double(h) * 4 + j * 5 + Double(k) * 6 + l * 7 + Double(m) * 8
            return Int16(truncatingIfNeeded: integers &- Int64(floating))
        }
        let seven = { @Sendable (a: Double, b: Float, c: Double, d: Float, e: Double, f: Float, g: Double) -> Float in
            Float(a) + b * 2 + Float(c) * 3 + d * 4 + Float(e) * 5 + f * 6 + Float(g) * 7
        }
        for path in [false, true] {
            func made<T>(_ body: () throws -> T) rethrows -> T { path ? try RegisterPath.withLibffiEntry(body) : try body() }
            let closures = try made { [try CClosure(thirteen), try CClosure(seven)] }
            #expect(entersInRegisters(closures[0].address) == (RegisterPath.isAvailable && !path))
            #expect(entersInRegisters(closures[1].address) == (RegisterPath.isAvailable && !path))
            let delegates = try made { () throws -> [DynamicDelegate] in
                let first = DynamicDelegate(protocol: descriptor(closures[0].signature))
                try first.implement("f", thirteen)
                let second = DynamicDelegate(protocol: descriptor(closures[1].signature))
                try second.implement("f", seven)
                return [first, second]
            }
            // Alive until the last call: an optimized build may release each after its last use.
            defer { withExtendedLifetime((closures, delegates)) {} }
            for function in [closures[0].address, slotFunction(delegates[0])] {
                let bytes = try callFromC(
                    function, closures[0].signature, Int8(-7), 1.5, Int16(-300), Float(0.25), Int32(-70000), 2.5, UInt8(250),
                    Float(-1.5), Int64(1) << 40, 0.125, Float(3), -4.5, Float(0.5))
                #expect(decode(bytes, as: Int16.self) == thirteen(-7, 1.5, -300, 0.25, -70000, 2.5, 250, -1.5, 1 << 40, 0.125, 3, -4.5, 0.5))
                #expect(bytes.count == 8 && Int64(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) })
                    == Int64(thirteen(-7, 1.5, -300, 0.25, -70000, 2.5, 250, -1.5, 1 << 40, 0.125, 3, -4.5, 0.5)))
            }
            for function in [closures[1].address, slotFunction(delegates[1])] {
                let bytes = try callFromC(function, closures[1].signature, 1.0, Float(2), 3.0, Float(4), 5.0, Float(6), 7.0)
                #expect(decode(bytes, as: Float.self) == seven(1, 2, 3, 4, 5, 6, 7))
            }
        }
    }

    @Test func voidAndNoArgumentsAgree() throws {
        let seen = Locked<[Int64]>([])
        let record = { @Sendable (a: Int64, b: Double) in seen.withLock { $0.append(a &* Int64(b)) } }
        let constant = { @Sendable () -> Int32 in -77 }
        for recorder in try Self.eachForm({ try CClosure(record) }) {
            _ = try callFromC(recorder.address, recorder.signature, Int64(6), 7.0)
        }
        for answer in try Self.eachForm({ try CClosure(constant) }) {
            #expect(try decode(callFromC(answer.address, answer.signature), as: Int32.self) == -77)
        }
        #expect(seen.withLock { $0 } == [42, 42, 42])
    }

    @Test func invocationClosuresAgree() throws {
        let signature = CSignature(.int16, [.double, .int32, .float])
        let body: @Sendable (CInvocation) -> Void = { call in
            let value = call.argument(0, as: Double.self) * Double(call.argument(1, as: Int32.self)) + Double(call.argument(2, as: Float.self))
            call.setReturnValue(Int16(value))
        }
        let fast = try CClosure(signature: signature, body)
        let slow = try RegisterPath.withLibffiEntry { try CClosure(signature: signature, body) }
        #expect(entersInRegisters(fast.address) == RegisterPath.isAvailable)
        let viaFast = try callFromC(fast.address, signature, 2.5, Int32(-4), Float(0.5))
        #expect(decode(viaFast, as: Int16.self) == -9)
        #expect(try callFromC(slow.address, signature, 2.5, Int32(-4), Float(0.5)) == viaFast)
    }

    @Test func narrowArgumentsIgnoreTheRestOfTheirRegisters() throws {
        let body = { @Sendable (a: Int8, b: Int16, c: Bool) -> Int64 in Int64(a) * 1_000_000 + Int64(b) * 10 + (c ? 1 : 0) }
        let expected: Int64 = -1_000_000 - 327_670 + 1
        for path in [false, true] {
            let closure = try path ? RegisterPath.withLibffiEntry { try CClosure(body) } : CClosure(body)
            #expect(fx_call_dirty_narrow(closure.address) == expected)
            let delegate = DynamicDelegate(protocol: descriptor(closure.signature))
            if path { try RegisterPath.withLibffiEntry { _ = try delegate.implement("f", body) } } else { try delegate.implement("f", body) }
            #expect(fx_call_dirty_narrow(slotFunction(delegate)) == expected)
        }
    }

    @Test func aWrappedOriginalIsReachedDirectlyAndAlike() throws {
        // The original is a C function of the fixtures; `next` past the stack calls it in register form.
        let original = UnsafeMutablePointer<UnsafeRawPointer>.allocate(capacity: 1)
        defer { original.deallocate() }
        original.initialize(to: unsafeBitCast(fx_ref_i32 as @convention(c) (Int32, Int32) -> Int32, to: UnsafeRawPointer.self))
        let signature = CSignature(.int32, [.int32, .int32])
        var results: [[UInt8]] = []
        for path in [false, true] {
            func make() throws -> DynamicDelegate {
                let delegate = DynamicDelegate(protocol: descriptor(signature), wrapping: UnsafeRawPointer(original))
                try delegate.override("f") { (next: Next<Int32, Int32, Int32>, a: Int32, b: Int32) -> Int32 in next(a, b) &* 2 }
                return delegate
            }
            let delegate = try path ? RegisterPath.withLibffiEntry { try make() } : make()
            results.append(try callFromC(slotFunction(delegate), signature, Int32(-2_000_000_000), Int32(147_483_648)))
        }
        #expect(decode(results[0], as: Int32.self) == fx_ref_i32(-2_000_000_000, 147_483_648) &* 2)
        #expect(results[0] == results[1])
    }

    /// A block delegate whose `@Slot` and owner-passing closures both serve `int64_t (int64_t, double)`.
    final class Scaler: BlockDelegate {
        @Slot("scale") var onScale: ((Int64, Double) -> Int64)?
        let factor: Int64 = 3
        init() throws { try super.init(protocol: ProtocolDescriptor(name: "scaler", methods: [
            MethodDescriptor(name: "scale", signature: CSignature(.int64, [.int64, .double])),
            MethodDescriptor(name: "offset", signature: CSignature(.int64, [.int64, .double])),
        ])) }
    }

    /// Every way of giving a closure — throwing, owner-passing, `@Slot`, an observer of results — hands C
    /// the same results on both paths.
    @Test func everyEntryPointAgrees() throws {
        struct Refused: Error {}
        let signature = CSignature(.int64, [.int64, .double])
        var outputs: [[Int64]] = []
        for path in [false, true] {
            func run<T>(_ body: () throws -> T) rethrows -> T { path ? try RegisterPath.withLibffiEntry(body) : try body() }
            let errors = Locked(0)
            let results = Locked<[Int64]>([])
            let throwing = try run { () -> DynamicDelegate in
                let delegate = DynamicDelegate(protocol: descriptor(signature))
                // A throwing closure takes the form whose entries can leave by a CallbackExit; any other
                // error it catches itself, handing C a value of its own.
                try delegate.implement("f") { (a: Int64, b: Double) throws -> Int64 in
                    do {
                        if a < 0 { throw Refused() }
                        return a * Int64(b)
                    } catch {
                        errors.withLock { $0 += 1 }
                        return -1
                    }
                }
                return delegate
            }
            let token = try run {
                try throwing.observeResult("f") { (result: Int64, a: Int64, _: Double) in results.withLock { $0.append(result &+ a) } }
            }
            let scaler = try run { () -> Scaler in
                let scaler = try Scaler()
                scaler.onScale = { a, b in a &* Int64(b) &+ 1 }
                try scaler.implement("offset") { (owner: Scaler, a: Int64, b: Double) -> Int64 in a &+ Int64(b) &* owner.factor }
                return scaler
            }
            let f = slotFunction(throwing)
            let table = scaler.table.assumingMemoryBound(to: UnsafeRawPointer.self)
            #expect(entersInRegisters(f) == (RegisterPath.isAvailable && !path))
            #expect(entersInRegisters(table[0]) == (RegisterPath.isAvailable && !path))
            var output: [Int64] = []
            for (a, b) in [(Int64(6), 7.0), (-2, 1.5), (9, -2.0)] {
                output.append(decode(try callFromC(f, signature, a, b), as: Int64.self))
                output.append(decode(try callFromC(table[0], signature, a, b), as: Int64.self))
                output.append(decode(try callFromC(table[1], signature, a, b), as: Int64.self))
            }
            output += results.withLock { $0 }
            output.append(Int64(errors.withLock { $0 }))
            outputs.append(output)
            withExtendedLifetime(token) {}
        }
        #expect(outputs[0] == [42, 43, 27, -1, -1, 1, -18, -17, 3, 48, -3, -9, 1])
        #expect(outputs[0] == outputs[1])
    }

    /// The shapes with register entries of their own (a comparator, `void (void *)` and the rest): a
    /// literal written where it is handed over reaches its shape's entry; its closure, slot, one-shot and
    /// notified callback give C what the same closure gives through libffi's path.
    @Test func theCommonShapesAgree() throws {
        func check(
            _ signature: CSignature, _ makeClosure: () throws -> CClosure, _ implement: (DynamicDelegate) throws -> Void,
            _ makeOthers: () throws -> [UnsafeRawPointer], expect expected: Int64, call: (UnsafeRawPointer) throws -> [UInt8],
            sourceLocation: Testing.SourceLocation = #_sourceLocation
        ) throws {
            let fast = try makeClosure()
            let slow = try RegisterPath.withLibffiEntry(makeClosure)
            #expect(entersInRegisters(fast.address) == RegisterPath.isAvailable, sourceLocation: sourceLocation)
            #expect(!entersInRegisters(slow.address), sourceLocation: sourceLocation)
            #expect(fast.signature == signature && slow.signature == signature, sourceLocation: sourceLocation)
            func delegate() throws -> DynamicDelegate {
                let delegate = DynamicDelegate(protocol: descriptor(signature))
                try implement(delegate)
                return delegate
            }
            let delegates = [try delegate(), try RegisterPath.withLibffiEntry(delegate)]
            // What C receives: a result register, narrow results widened as libffi widens them, or the
            // 8 bytes a `void` closure wrote.
            let bytes = withUnsafeBytes(of: expected) { Array($0) }
            try withExtendedLifetime((fast, slow, delegates)) {  // an optimized build lets them go after their last use
                for function in [slow.address, fast.address] + delegates.map(slotFunction) + (try makeOthers()) {
                    #expect(try call(function) == bytes, sourceLocation: sourceLocation)
                }
            }
        }
        let base = UnsafeMutableRawPointer(bitPattern: 0x7000_0000_2000)
        var notified: [NotifiedCallback] = []
        defer { for callback in notified { callback.release() } }
        func remember(_ callback: NotifiedCallback) -> UnsafeRawPointer {
            notified.append(callback)
            return callback.callback.address
        }

        let values: [Int32] = [7, -3]
        try values.withUnsafeBufferPointer { values in
            let (a, b) = (UnsafeRawPointer(values.baseAddress!), UnsafeRawPointer(values.baseAddress! + 1))
            try check(
                CSignature(.int32, [.pointer, .pointer]),
                { try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in a!.load(as: Int32.self) &* 10 &+ b!.load(as: Int32.self) } },
                { try $0.implement("f") { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in a!.load(as: Int32.self) &* 10 &+ b!.load(as: Int32.self) } },
                {
                    let shot = try CCallback.oneShot { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in a!.load(as: Int32.self) &* 10 &+ b!.load(as: Int32.self) }
                    let notifiedCallback = try NotifiedCallback { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in a!.load(as: Int32.self) &* 10 &+ b!.load(as: Int32.self) }
                    return [shot.address, remember(notifiedCallback)]
                },
                expect: 67, call: { try callFromC($0, CSignature(.int32, [.pointer, .pointer]), a, b) })
        }

        // `void (void *)`: the effect is what C sees.
        var counter: Int64 = 0
        try withUnsafeMutablePointer(to: &counter) { counter in
            let signature = CSignature(.void, [.pointer])
            func call(_ function: UnsafeRawPointer) throws -> [UInt8] {
                counter.pointee = 40
                _ = try callFromC(function, signature, UnsafeMutableRawPointer(counter))
                return withUnsafeBytes(of: counter.pointee) { Array($0) }
            }
            try check(
                signature,
                { try CClosure { (p: UnsafeMutableRawPointer?) in p!.storeBytes(of: p!.load(as: Int64.self) &+ 2, as: Int64.self) } },
                { try $0.implement("f") { (p: UnsafeMutableRawPointer?) in p!.storeBytes(of: p!.load(as: Int64.self) &+ 2, as: Int64.self) } },
                { [remember(try NotifiedCallback { (p: UnsafeMutableRawPointer?) in p!.storeBytes(of: p!.load(as: Int64.self) &+ 2, as: Int64.self) })] },
                expect: 42, call: call)
            #expect(counter.pointee == 42)

            try check(
                CSignature(.void, [.pointer, .pointer]),
                { try CClosure { (e: UnsafeMutableRawPointer?, c: UnsafeMutableRawPointer?) in c!.storeBytes(of: c!.load(as: Int64.self) &* Int64(Int(bitPattern: e)), as: Int64.self) } },
                { try $0.implement("f") { (e: UnsafeMutableRawPointer?, c: UnsafeMutableRawPointer?) in c!.storeBytes(of: c!.load(as: Int64.self) &* Int64(Int(bitPattern: e)), as: Int64.self) } },
                { [remember(try NotifiedCallback { (e: UnsafeMutableRawPointer?, c: UnsafeMutableRawPointer?) in c!.storeBytes(of: c!.load(as: Int64.self) &* Int64(Int(bitPattern: e)), as: Int64.self) })] },
                expect: 15, call: { function in
                    counter.pointee = 5
                    _ = try callFromC(function, CSignature(.void, [.pointer, .pointer]), UnsafeMutableRawPointer(bitPattern: 3), UnsafeMutableRawPointer(counter))
                    return withUnsafeBytes(of: counter.pointee) { Array($0) }
                })
            #expect(counter.pointee == 15)
        }

        try check(
            CSignature(.int32, [.pointer]),
            { try CClosure { (p: UnsafeMutableRawPointer?) -> Int32 in Int32(truncatingIfNeeded: Int(bitPattern: p) >> 12) &- 1 } },
            { try $0.implement("f") { (p: UnsafeMutableRawPointer?) -> Int32 in Int32(truncatingIfNeeded: Int(bitPattern: p) >> 12) &- 1 } },
            { [remember(try NotifiedCallback { (p: UnsafeMutableRawPointer?) -> Int32 in Int32(truncatingIfNeeded: Int(bitPattern: p) >> 12) &- 1 })] },
            expect: 1, call: { try callFromC($0, CSignature(.int32, [.pointer]), base) })
        try check(
            CSignature(.pointer, [.pointer]),
            { try CClosure { (p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in p! + 0x44 } },
            { try $0.implement("f") { (p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in p! + 0x44 } },
            { [remember(try NotifiedCallback { (p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in p! + 0x44 })] },
            expect: Int64(Int(bitPattern: base! + 0x44)), call: { try callFromC($0, CSignature(.pointer, [.pointer]), base) })
        try check(
            CSignature(.int32, [.pointer, .int32]),
            { try CClosure { (p: UnsafeMutableRawPointer?, count: Int32) -> Int32 in p == nil ? -1 : count &* -3 } },
            { try $0.implement("f") { (p: UnsafeMutableRawPointer?, count: Int32) -> Int32 in p == nil ? -1 : count &* -3 } },
            { [remember(try NotifiedCallback { (p: UnsafeMutableRawPointer?, count: Int32) -> Int32 in p == nil ? -1 : count &* -3 })] },
            expect: -33, call: { try callFromC($0, CSignature(.int32, [.pointer, .int32]), base, Int32(11)) })
    }
}
