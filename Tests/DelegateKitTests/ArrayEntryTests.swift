@testable import DelegateKit  // TrampolineShim.arrayEntry; RegisterPath.withLibffiEntry: both entries in one process
import DelegateKitFixtures
import Glibc
import Synchronization
import Testing

/// A signature whose arguments are all scalars of at most 8 bytes, but more of them than the register
/// path's registers hold (a sixth integer, a ninth floating-point value, stack words), enters through
/// `cffi_enter_array`, which makes libffi's argument array from a table of places worked out when the
/// closure was made and runs the handler libffi's entry would. The two entries do one job: for every
/// scalar type in a register, on the stack and as the result, a closure, a slot and a `.stable` slot made
/// each way hand a C caller the same bytes, and each receives exactly what C passed. CI also runs the
/// suite with `DELEGATEKIT_FAST_PATH=0`, where everything enters through libffi.
@Suite struct ArrayEntryTests {
    /// Whether C entering `address` reaches `cffi_enter_array`.
    static func entersThroughArray(_ address: UnsafeRawPointer) -> Bool {
        fx_code_kind(address) == 2 && fx_slot_entry(address).map { TrampolineShim.arrayEntries.contains($0) } == true
    }

    /// `value`'s bytes, zero-extended to a word: what a closure received, comparable whatever its type.
    static func bits<T>(_ value: T) -> UInt64 {
        var word: UInt64 = 0
        withUnsafeBytes(of: value) { source in withUnsafeMutableBytes(of: &word) { $0.copyMemory(from: source) } }
        return word
    }

    /// What the last call received; written by calls that the test thread makes one at a time.
    final class Received: @unchecked Sendable {
        var values: [UInt64] = []
    }

    /// `body` as a `CClosure`, a slot and a `.stable` slot, each made entering through the array entry
    /// (where the register path runs) and through libffi's, in that order: their signature, the addresses
    /// C calls, and what keeps them alive.
    static func onBothEntries<each A: CValue, R>(
        _ body: @escaping @Sendable (repeat each A) -> R
    ) throws -> (signature: CSignature, functions: [UnsafeRawPointer], owners: [AnyObject]) {
        let closures = [try CClosure(body), try RegisterPath.withLibffiEntry { try CClosure(body) }]
        let signature = closures[0].signature
        let descriptor = ProtocolDescriptor(name: "both", methods: [MethodDescriptor(name: "f", signature: signature)])
        func delegate(stable: Bool) throws -> DynamicDelegate {
            let delegate = DynamicDelegate(protocol: descriptor)
            try delegate.implement("f", body)
            if stable { try delegate.setPolicy(.stable) }
            return delegate
        }
        let delegates = try [false, true].flatMap { stable in
            [try delegate(stable: stable), try RegisterPath.withLibffiEntry { try delegate(stable: stable) }]
        }
        let functions = closures.map(\.address) + delegates.map { $0.table.load(as: UnsafeRawPointer.self) }
        return (signature, functions, closures + delegates)
    }

    /// `T (T, int64_t × 8, double × 8, T, T)`: the first `T` in a register, the last two on the caller's
    /// stack on both CPUs (x86_64 has 6 integer argument registers, aarch64 8; each has 8 vector ones), and
    /// some of the `int64_t`s and `double`s after it on the stack as well. Checks the result C gets and
    /// every argument the closure got, for a `CClosure`, a slot and a `.stable` slot, each made entering
    /// through the array entry (where it runs) and through libffi.
    func agree<T: CValue & Equatable>(_ a: T, _ b: T, _ c: T, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let received = Received()
        let body: @Sendable (T, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64,
                             Double, Double, Double, Double, Double, Double, Double, Double, T, T) -> T = {
            a, i1, i2, i3, i4, i5, i6, i7, i8, d1, d2, d3, d4, d5, d6, d7, d8, b, c in
            let integers: [UInt64] = [i1, i2, i3, i4, i5, i6, i7, i8].map { UInt64(bitPattern: $0) }
            let doubles: [UInt64] = [d1, d2, d3, d4, d5, d6, d7, d8].map(\.bitPattern)
            received.values = [Self.bits(a)] + integers + doubles + [Self.bits(b), Self.bits(c)]
            return c
        }
        let integers: [Int64] = [-1, 2, -3_000_000_000, 4, -5, 6, Int64.min, Int64.max]
        let doubles: [Double] = [0.5, -1.5, 2.5, -3.5, 4.5, -5.5, 6.5, .pi]
        let sent = [Self.bits(a)] + integers.map { UInt64(bitPattern: $0) } + doubles.map(\.bitPattern) + [Self.bits(b), Self.bits(c)]

        let made = try Self.onBothEntries(body)
        defer { withExtendedLifetime(made.owners) {} }
        let (signature, functions) = (made.signature, made.functions)
        for (index, function) in functions.enumerated() {
            let viaArray = index % 2 == 0
            #expect(Self.entersThroughArray(function) == (viaArray && RegisterPath.isAvailable), sourceLocation: sourceLocation)
            received.values = []
            let result = try callFromC(
                function, signature, a, integers[0], integers[1], integers[2], integers[3], integers[4], integers[5],
                integers[6], integers[7], doubles[0], doubles[1], doubles[2], doubles[3], doubles[4], doubles[5],
                doubles[6], doubles[7], b, c)
            #expect(decode(result, as: T.self) == c, "\(T.self), function \(index)", sourceLocation: sourceLocation)
            #expect(received.values == sent, "\(T.self), function \(index)", sourceLocation: sourceLocation)
            if index > 0 {
                #expect(try result == callFromC(
                    functions[0], signature, a, integers[0], integers[1], integers[2], integers[3], integers[4],
                    integers[5], integers[6], integers[7], doubles[0], doubles[1], doubles[2], doubles[3], doubles[4],
                    doubles[5], doubles[6], doubles[7], b, c), sourceLocation: sourceLocation)
            }
        }
    }

    @Test func everyScalarInRegistersAndOnTheStack() throws {
        try agree(true, false, true)
        try agree(Int8(-3), Int8(100), Int8.min)
        try agree(UInt8(200), UInt8(1), UInt8.max)
        try agree(Int16(-300), Int16(12_345), Int16.min)
        try agree(UInt16(60_000), UInt16(7), UInt16.max)
        try agree(Int32(-70_000), Int32(1 << 30), Int32.min)
        try agree(UInt32(4_000_000_000), UInt32(9), UInt32.max)
        try agree(Int64(-5_000_000_000), Int64(11), Int64.min)
        try agree(UInt64.max, UInt64(13), UInt64(1) << 63)
        try agree(Float(1.5), Float(-2.25), Float.greatestFiniteMagnitude)
        try agree(Double(-0.0), Double(1e300), -Double.pi)
        try agree(UnsafeMutableRawPointer(bitPattern: 0x1000), UnsafeMutableRawPointer?.none, UnsafeMutableRawPointer(bitPattern: UInt.max))
    }

    /// The bytes of `value` that hold its C type's members (not its padding, nor a `long double`'s six
    /// unused bytes): what C passing a struct promises to deliver.
    static func meaningfulBytes<T: CValue>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { bytes in
            leaves(of: T.cType).flatMap { leaf in
                Array(bytes[leaf.offset..<(leaf.offset + (leaf.type == .longDouble ? 10 : leaf.type.size))])
            }
        }
    }

    /// `T (T, int64_t × 6, double × 8, T)`: on x86_64 the first `T` in registers where its class has room
    /// (or in memory), some of the `int64_t`s and `double`s after it on the stack, the last `T` on the
    /// stack; the result in registers or in memory. The array entry (on x86_64, where `T` is not of two
    /// classes) and libffi's agree, for a `CClosure`, a slot and a `.stable` slot; `arrayEntry` is
    /// whether the array entry takes it here.
    func agreeOnStruct<T: CValue>(_ type: T.Type, arrayEntry: Bool, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let a = sample(T.self, seed: 1), b = sample(T.self, seed: 2)
        let received = Mutex<[[UInt8]]>([])
        let body: @Sendable (T, Int64, Int64, Int64, Int64, Int64, Int64,
                             Double, Double, Double, Double, Double, Double, Double, Double, T) -> T = {
            a, i1, i2, i3, i4, i5, i6, d1, d2, d3, d4, d5, d6, d7, d8, b in
            let words = [i1, i2, i3, i4, i5, i6].map { UInt64(bitPattern: $0) } + [d1, d2, d3, d4, d5, d6, d7, d8].map(\.bitPattern)
            received.withLock { $0 = [Self.meaningfulBytes(a), Self.meaningfulBytes(b)] + words.map { withUnsafeBytes(of: $0) { Array($0) } } }
            return combined(a, b)
        }
        let integers: [Int64] = [-1, 2, -3_000_000_000, 4, Int64.min, Int64.max]
        let doubles: [Double] = [0.5, -1.5, 2.5, -3.5, 4.5, -5.5, 6.5, .pi]
        let sent = [Self.meaningfulBytes(a), Self.meaningfulBytes(b)]
            + (integers.map { UInt64(bitPattern: $0) } + doubles.map(\.bitPattern)).map { withUnsafeBytes(of: $0) { Array($0) } }

        let made = try Self.onBothEntries(body)
        defer { withExtendedLifetime(made.owners) {} }
        let (signature, functions) = (made.signature, made.functions)
        let expected = Self.meaningfulBytes(combined(a, b))
        for (index, function) in functions.enumerated() {
            let viaArray = index % 2 == 0
            #expect(Self.entersThroughArray(function) == (viaArray && arrayEntry && RegisterPath.isAvailable),
                    "\(T.self), function \(index)", sourceLocation: sourceLocation)
            received.withLock { $0 = [] }
            let result = try callFromC(
                function, signature, a, integers[0], integers[1], integers[2], integers[3], integers[4], integers[5],
                doubles[0], doubles[1], doubles[2], doubles[3], doubles[4], doubles[5], doubles[6], doubles[7], b)
            #expect(Self.meaningfulBytes(decode(result, as: T.self)) == expected, "\(T.self), function \(index)", sourceLocation: sourceLocation)
            #expect(received.withLock { $0 } == sent, "\(T.self), function \(index)", sourceLocation: sourceLocation)
        }
    }

    /// Structs of one class, or in memory, take the array entry on x86_64; of two classes, libffi's. On
    /// aarch64 every struct keeps libffi's entry.
    @Test func structsInRegistersAndInMemoryAgree() throws {
        #if arch(x86_64)
        let x86 = true
        #else
        let x86 = false
        #endif
        try agreeOnStruct(S1.self, arrayEntry: x86)
        try agreeOnStruct(S3.self, arrayEntry: x86)
        try agreeOnStruct(S7.self, arrayEntry: x86)
        try agreeOnStruct(S8.self, arrayEntry: x86)  // int32 and float in one eightbyte: INTEGER
        try agreeOnStruct(SFF.self, arrayEntry: x86)
        try agreeOnStruct(S12.self, arrayEntry: x86)  // two SSE eightbytes, the second half used
        try agreeOnStruct(SDD.self, arrayEntry: x86)
        try agreeOnStruct(S17.self, arrayEntry: x86)  // in memory
        try agreeOnStruct(S24.self, arrayEntry: x86)
        try agreeOnStruct(S32.self, arrayEntry: x86)
        try agreeOnStruct(S64.self, arrayEntry: x86)
        try agreeOnStruct(N2.self, arrayEntry: x86)
        try agreeOnStruct(N3.self, arrayEntry: x86)
        try agreeOnStruct(SLongDouble.self, arrayEntry: x86)  // a long double: in memory, aligned to 16
        try agreeOnStruct(SLD16.self, arrayEntry: false)  // INTEGER then SSE
        try agreeOnStruct(SPair.self, arrayEntry: false)
        try agreeOnStruct(N1.self, arrayEntry: false)
        #if arch(x86_64)
        // A long double: in memory as an argument, aligned to 16; on the x87 stack as the result.
        try agreeOnStruct(Float80.self, arrayEntry: true)
        #endif
    }

    /// A struct result of two eightbytes comes back in the registers its classes name, whatever they are
    /// (both integer, both SSE, integer then SSE, SSE then integer): the array entry takes every such
    /// signature on x86_64, and gives C what libffi's entry gives.
    @Test func structResultsOfEachPairOfClasses() throws {
        #if arch(x86_64)
        let x86 = true
        #else
        let x86 = false
        #endif
        func agree<R: CValue>(_ make: @escaping @Sendable (Int64, Double) -> R, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
            let closures = [try CClosure(make), try RegisterPath.withLibffiEntry { try CClosure(make) }]
            let signature = closures[0].signature
            #expect(Self.entersThroughArray(closures[0].address) == (x86 && RegisterPath.isAvailable), sourceLocation: sourceLocation)
            for (integer, double) in [(Int64(-7), 2.5), (Int64.max, -1e300), (0, 0)] {
                let results = try closures.map { try callFromC($0.address, signature, integer, double) }
                #expect(Self.meaningfulBytes(decode(results[0], as: R.self)) == Self.meaningfulBytes(make(integer, double)),
                        "\(R.self)", sourceLocation: sourceLocation)
                #expect(results[0] == results[1], "\(R.self)", sourceLocation: sourceLocation)
            }
        }
        try agree { IntegerPair(first: $0, second: Int64(bitPattern: $1.bitPattern)) }
        try agree { SDD(a: $1, b: Double($0)) }
        try agree { SLD16(a: $0, b: $1) }
        try agree { DoubleThenInteger(first: $1, second: $0) }
    }

    /// Which entry C reaches, by signature: the register path's where every argument fits its registers,
    /// the array entry where every argument and the result lies in one place (a scalar of at most 8
    /// bytes; on x86_64 a `long double` and a struct of one register class or in memory too), libffi's
    /// where any does not (a complex number; a struct of two classes; on aarch64 any struct).
    @Test func eachSignatureTakesItsEntry() throws {
        let here = RegisterPath.isAvailable
        #if arch(x86_64)
        let x86 = true
        #else
        let x86 = false
        #endif
        let five = try CClosure { (a: Int64, b: Int64, c: Int64, d: Int64, e: Int64) -> Int64 in a &+ b &+ c &+ d &+ e }
        let six = try CClosure { (a: Int64, b: Int64, c: Int64, d: Int64, e: Int64, f: Int64) -> Int64 in a &+ b &+ c &+ d &+ e &+ f }
        let many = try CClosure(Self.sum12)
        let wide = try CClosure(signature: CSignature(.longDouble, [.longDouble, .int64])) { _ in }
        #expect(fx_code_kind(five.address) == (here ? 1 : 2))
        #expect(Self.entersThroughArray(six.address) == here)
        #expect(Self.entersThroughArray(many.address) == here)
        let complex = try CClosure(signature: CSignature(.complexDouble, [.complexDouble])) { _ in }
        let mixed = try CClosure(signature: CSignature(.void, [SLD16.cType])) { _ in }
        #expect(fx_code_kind(wide.address) == 2 && Self.entersThroughArray(wide.address) == (here && x86))
        #expect(fx_code_kind(complex.address) == 2 && !Self.entersThroughArray(complex.address))
        #expect(fx_code_kind(mixed.address) == 2 && !Self.entersThroughArray(mixed.address))
        #expect(fx_call_i64x12(many.address) == 78)
        let viaLibffi = try RegisterPath.withLibffiEntry { try CClosure(Self.sum12) }
        #expect(!Self.entersThroughArray(viaLibffi.address))
        #expect(fx_call_i64x12(viaLibffi.address) == 78)
    }

    /// A variadic closure's cif is its fixed arguments padded with a word per free register and the
    /// caller's stack words (`VariadicLayout`): all scalars of 8 bytes on x86_64, so it enters through
    /// the array entry there; on aarch64 a free vector register's padding is a 16-byte `long double`, so
    /// libffi's entry runs.
    @Test func variadicClosuresTakeTheArrayEntryWhereTheirPaddingIsScalar() throws {
        let lines = Mutex<[String]>([])
        let logger = try CClosure { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            let line = arguments.formatted(format!)
            lines.withLock { $0.append(line) }
        }
        #if arch(x86_64)
        #expect(Self.entersThroughArray(logger.address) == RegisterPath.isAvailable)
        #else
        #expect(!Self.entersThroughArray(logger.address))
        #endif
        // Sixteen arguments after the format: eight in registers of each class and the rest on the stack.
        let through = unsafeBitCast(try fixture("fx_log_many"), to: (@convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Void).self)
        withExtendedLifetime(logger) { through(logger.address, nil) }
        #expect(lines.withLock { $0 } == ["1 2 3 4 5 6 7 8 1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0 9.0 10.0 end"])
    }

    /// A thread may end inside a closure (`pthread_exit`, a cancellation): glibc unwinds its frames, the
    /// array entry's among them, by their call frame information. In a child process, so that a broken
    /// unwind fails the test instead of the run. (ThreadSanitizer cannot follow `pthread_cancel`: under it
    /// only the exit is checked.)
    @Test func aThreadEndsInsideAClosureEnteredThroughTheArray() async throws {
        await #expect(processExitsWith: .success) {
            alarm(60)
            let inside = Atomic<Int>(0)
            let exits: @Sendable (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = {
                a, _, _, _, _, _, _, _, _, _, _, l in
                inside.add(1, ordering: .relaxed)
                if a == 1 && l == 12 { pthread_exit(nil) }
                return -1
            }
            let waits: @Sendable (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = {
                _, _, _, _, _, _, _, _, _, _, _, _ in
                inside.add(1, ordering: .relaxed)
                while true { pause() }  // a cancellation point
            }
            let exiting = try CClosure(exits)
            let waiting = try CClosure(waits)
            guard !RegisterPath.isAvailable || (ArrayEntryTests.entersThroughArray(exiting.address) && ArrayEntryTests.entersThroughArray(waiting.address)) else { exit(2) }
            guard let first = fx_caller_start_calling(fx_call_i64x12, exiting.address), fx_caller_join(first, nil) == 0 else { exit(3) }
            if !underThreadSanitizer {
                guard let second = fx_caller_start_calling(fx_call_i64x12, waiting.address) else { exit(4) }
                while inside.load(ordering: .relaxed) < 2 { usleep(1000) }
                fx_caller_cancel(second)
                guard fx_caller_join(second, nil) == 0 else { exit(5) }
            }
            let sum = try CClosure(ArrayEntryTests.sum12)
            var result: Int64 = 0
            guard let third = fx_caller_start_calling(fx_call_i64x12, sum.address), fx_caller_join(third, &result) == 1, result == 78 else { exit(6) }
            exit(0)
        }
    }

    static let sum12: @Sendable (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = {
        a, b, c, d, e, f, g, h, i, j, k, l in [a, b, c, d, e, f, g, h, i, j, k, l].reduce(0, &+)
    }
}

/// Two integer eightbytes, for the result classes' test (no fixture struct is of this shape).
struct IntegerPair: CValue {
    var first: Int64
    var second: Int64
    static var cType: CType { .structure([.int64, .int64]) }
}

/// An SSE eightbyte, then an integer one.
struct DoubleThenInteger: CValue {
    var first: Double
    var second: Int64
    static var cType: CType { .structure([.double, .int64]) }
}
