// The macro's tests need the package trait: `swift test --traits Macros`.
#if Macros
import DelegateKitMacros
import Glibc
import DelegateKitBenchmarkSupport
import Testing

/// `#CClosure` closures called from C: the results C receives must be what the closure computes and what
/// `CClosure(_:)` gives, on the register path and (with `DELEGATEKIT_FAST_PATH=0`) libffi's.
@Suite struct CClosureCallTests {
    @Test func cLoopsGetWhatTheDirectFunctionsReturn() throws {
        // The benchmark's C loops feed each result back as an argument, so any wrong register shows.
        let bias = Int64(3)
        let add = try #CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
        #expect(bench_loop_i64(add.address, 1_000) == bench_loop_i64(bench_direct(0), 1_000) + 3 * 1_000)
        let addDoubles = try #CClosure { (a: Double, b: Double) -> Double in a + b }
        #expect(bench_loop_f64(addDoubles.address, 1_000) == bench_loop_f64(bench_direct(1), 1_000))
        let mixed = try #CClosure { (p: UnsafeMutableRawPointer?, a: Int32, b: Int64, c: Double, d: Float, q: UnsafeMutableRawPointer?) -> Int32 in
            (a &+ Int32(truncatingIfNeeded: b) &+ Int32(c) &+ Int32(d)) &+ (p == q ? 1 : 0)
        }
        #expect(bench_loop_mixed6(mixed.address, 1_000) == bench_loop_mixed6(bench_direct(2), 1_000))
    }

    /// The README's example (quoted from here: this package's tests are the only code that can import the
    /// macro and is compiled in CI).
    @Test func theReadmeExample() throws {
        // doc:begin macro-cclosure
        let scale = 2.5
        let weigh = try #CClosure { (count: Int64, mass: Double) -> Double in Double(count) * mass * scale }
        let call = try weigh.functionPointer(as: (@convention(c) (Int64, Double) -> Double).self)
        // doc:end
        #expect(call(4, 2) == 20)
        #expect(weigh.signature == CSignature(.double, [.int64, .double]))
    }

    @Test func aComparatorSortsForQsort() throws {
        var numbers: [Int32] = (0..<500).map { Int32(($0 * 7919) % 500) }
        let descending = true
        let compare = try #CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
            return descending ? (x < y ? 1 : x > y ? -1 : 0) : (x < y ? -1 : x > y ? 1 : 0)
        }
        try withExtendedLifetime(compare) { qsort(&numbers, numbers.count, 4, try compare.functionPointer()) }
        #expect(numbers == (0..<500).reversed().map { Int32($0) })
    }

    @Test func threadsOfCCallAtOnce() throws {
        let add = try #CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b }
        // bench_threads_i64 starts 4 threads that each run the C loop, and times them; what matters here
        // is that the calls from every thread return (TSan and ASan check the rest).
        #expect(bench_threads_i64(add.address, 10_000, 4) > 0)
        #expect(bench_loop_i64(add.address, 100) == bench_loop_i64(bench_direct(0), 100))
    }

    /// Narrow integer results reach C extended to 32 bits by their signedness, as clang's callers
    /// expect and both of libffi's and DelegateKit's paths leave them (read here as the whole of `eax`).
    @Test func narrowResultsAreExtendedAsOnLibffisPath() throws {
        func eax(_ closure: CClosure) -> UInt32 {
            unsafeBitCast(closure.address, to: (@convention(c) () -> UInt32).self)()
        }
        let minus = Int8(-3)
        let macroInt8 = try #CClosure { () -> Int8 in minus }
        let plainInt8 = try CClosure { () -> Int8 in minus }
        #expect(eax(macroInt8) == UInt32(bitPattern: -3))
        #expect(eax(macroInt8) == eax(plainInt8))
        let high = UInt8(0xF0)
        let macroUInt8 = try #CClosure { () -> UInt8 in high }
        #expect(eax(macroUInt8) == 0xF0)
        let negative16 = Int16(-2)
        let macroInt16 = try #CClosure { () -> Int16 in negative16 }
        #expect(eax(macroInt16) == UInt32(bitPattern: -2))
        let high16 = UInt16(0x8001)
        let macroUInt16 = try #CClosure { () -> UInt16 in high16 }
        #expect(eax(macroUInt16) == 0x8001)
        let yes = true
        let macroBool = try #CClosure { () -> Bool in yes }
        #expect(eax(macroBool) == 1)
    }

    /// Every register a register-only signature can use: five integer arguments (the sixth holds the
    /// context) and eight SSE ones, of every width.
    @Test func everyArgumentRegisterArrives() throws {
        let scale = 1.0
        let all = try #CClosure {
            (a: Int8, b: UInt16, c: Int32, d: Int64, e: UnsafeRawPointer?, f: Float, g: Double, h: Float, i: Double,
             j: Double, k: Double, l: Float, m: Double) -> Double in
            let integers = Double(a) + Double(b) * 10 + Double(c) * 100 + Double(d) * 1_000 + (e == nil ? 0 : 10_000)
            let floats = Double(f) + g * 2 + Double(h) * 3 + i * 4 + j * 5 + k * 6 + Double(l) * 7 + m * 8
            return (integers + floats * 100_000) * scale
        }
        typealias Function = @convention(c) (
            Int8, UInt16, Int32, Int64, UnsafeRawPointer?, Float, Double, Float, Double, Double, Double, Float, Double
        ) -> Double
        let result = try all.functionPointer(as: Function.self)(-1, 2, -3, 4, UnsafeRawPointer(bitPattern: 8), 1, 2, 3, 4, 5, 6, 7, 8)
        let integers = -1.0 + 20 - 300 + 4_000 + 10_000
        let floats = 1.0 + 4 + 9 + 16 + 25 + 36 + 49 + 64
        #expect(result == integers + floats * 100_000)
        #expect(all.signature.description.hasPrefix("double (int8_t, uint16_t, int32_t, int64_t, void *, float, double"))
    }

    @Test func voidClosuresAndCapturedStateWork() throws {
        final class Counter: @unchecked Sendable { var count = 0 }  // Touched by one thread here.
        let counter = Counter()
        let bump = try #CClosure { (by: Int32) -> Void in counter.count += Int(by) }
        let call = try bump.functionPointer(as: (@convention(c) (Int32) -> Void).self)
        call(2)
        call(5)
        #expect(counter.count == 7)
        let none = try #CClosure { () -> Void in counter.count = 0 }
        try none.functionPointer(as: (@convention(c) () -> Void).self)()
        #expect(counter.count == 0)
    }

    /// A type whose stated C type is of a register class its Swift type does not say (a struct holding a
    /// double): the closure's own entry cannot convert it by type, so the closure runs as
    /// `CClosure(_:)` does.
    @Test func aTypeTheEntryCannotConvertFallsBack() throws {
        struct Meters: CValue, Equatable {
            var value: Double
            static var cType: CType { .double }
        }
        let double = try #CClosure { (m: Meters) -> Meters in Meters(value: m.value * 2) }
        let result = try double.functionPointer(erasedAs: (@convention(c) (Double) -> Double).self)(21)
        #expect(result == 42)
    }

    @Test func theClosureIsTheSameKindAsCClosure() throws {
        let k = Int32(1)
        let macro = try #CClosure { (a: Int32) -> Int32 in a &+ k }
        let plain = try CClosure { (a: Int32) -> Int32 in a &+ k }
        #expect(macro.signature == plain.signature)
        #expect(throws: DelegateError.self) {
            try macro.functionPointer(as: (@convention(c) (Double) -> Int32).self)
        }
    }

    /// What the closure captures lives exactly as long as the `CClosure`: the entry the expansion declares
    /// holds the closure, and nothing holds the `CClosure` back.
    @Test func theCapturesAreReleasedWithTheClosure() throws {
        final class Tally: @unchecked Sendable { var count: Int64 = 0 }  // Touched by this thread only.
        weak var released: Tally?
        do {
            let tally = Tally()
            released = tally
            let add = try #CClosure { (a: Int64, b: Int64) -> Int64 in
                tally.count += 1
                return a &+ b
            }
            #expect(bench_loop_i64(add.address, 10) == bench_loop_i64(bench_direct(0), 10))
            #expect(tally.count == 10)
        }
        #expect(released == nil)
    }

    /// Like `CClosure(_:)`, a closure made inside `withCallbackScope` is kept until the scope ends.
    @Test func aScopeKeepsTheClosureUntilItEnds() throws {
        weak var kept: CClosure?
        try withCallbackScope {
            let k = Int64(1)
            kept = try #CClosure { (a: Int64) -> Int64 in a &+ k }
            let increment = try kept!.functionPointer(as: (@convention(c) (Int64) -> Int64).self)
            #expect(increment(41) == 42)
        }
        #expect(kept == nil)
    }
}
#endif
