import DelegateKitBenchmarkSupport
import DelegateKit

/// The comparators glibc's `qsort` is timed with, and Swift's own sort for scale.
///
/// A sort is the callback workload C libraries really have: millions of short calls whose cost is
/// mostly the way in and out, so the register path should show here as it does in the call loops.
enum QsortComparator: String, CaseIterable, Codable, Sendable {
    /// `bench_compare_int32`, plain C: the floor.
    case c
    /// A `CClosure` made through the typed API, as the README shows it.
    case closure
    /// `CClosure(signature:)`, its arguments and result going through `CInvocation`.
    case invocation
    /// `Array.sort()`, no C and no callback at all.
    case swiftSort

    var label: String {
        switch self {
        case .c: return "plain C comparator"
        case .closure: return "`CClosure` comparator"
        case .invocation: return "`CClosure(signature:)` + `CInvocation` comparator"
        case .swiftSort: return "Swift `Array.sort()`"
        }
    }
}

/// One comparator's sorts: the median time, and whether every run's result was right.
struct QsortTiming: Codable, Sendable {
    let comparator: QsortComparator
    let milliseconds: Double
    let runs: Int
    /// Every run left the array sorted, and equal to the input sorted ascending (nothing lost or doubled).
    let allSorted: Bool
}

enum QsortBenchmark {
    static let count = 1_000_000

    /// The same pseudo-random numbers in every process and every run: a 64-bit LCG (Knuth's MMIX
    /// constants) from a fixed seed, each value the high 32 bits of the state (the low bits of an LCG
    /// repeat with short periods).
    static func input() -> [Int32] {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int32(truncatingIfNeeded: state >> 32)
        }
    }

    /// `runs` sorts with each comparator, taken in turns (one run of each, then the next round) so that
    /// the machine's drift hits them alike; each run sorts a fresh copy of ``input()``.
    static func measure(_ comparators: [QsortComparator], runs: Int) throws -> [QsortTiming] {
        let input = input()
        let expected = input.sorted()
        // The closures are made once, outside the timing, and live until the last sort.
        let closure = try makeQsortClosure()
        let invocation = try makeQsortInvocationClosure()
        var samples = Array(repeating: [Double](), count: comparators.count)
        var allSorted = Array(repeating: true, count: comparators.count)
        withExtendedLifetime((closure, invocation)) {
            for _ in 0..<runs {
                for (index, comparator) in comparators.enumerated() {
                    var data = input
                    let nanoseconds: Int64
                    switch comparator {
                    case .c: nanoseconds = qsort(&data, with: unsafeBitCast(bench_compare_int32 as QsortFunction, to: UnsafeRawPointer.self))
                    case .closure: nanoseconds = qsort(&data, with: closure.address)
                    case .invocation: nanoseconds = qsort(&data, with: invocation.address)
                    case .swiftSort:
                        let start = bench_now()
                        data.sort()
                        nanoseconds = bench_now() - start
                    }
                    samples[index].append(Double(nanoseconds) / 1_000_000)
                    allSorted[index] = allSorted[index] && isSorted(data) && data == expected
                }
            }
        }
        return comparators.indices.map {
            QsortTiming(comparator: comparators[$0], milliseconds: median(samples[$0]), runs: runs, allSorted: allSorted[$0])
        }
    }

    /// glibc's `qsort` of `data` with the comparator at `compare`, timed in C around the one call.
    private static func qsort(_ data: inout [Int32], with compare: UnsafeRawPointer) -> Int64 {
        data.withUnsafeMutableBufferPointer { bench_qsort_int32($0.baseAddress, $0.count, compare) }
    }

    private static func isSorted(_ data: [Int32]) -> Bool {
        data.withUnsafeBufferPointer { buffer in
            buffer.indices.dropFirst().allSatisfy { buffer[$0 - 1] <= buffer[$0] }
        }
    }
}

/// qsort's comparator type, as Swift imports `bench_compare_int32`.
typealias QsortFunction = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32

/// The same three-way comparison as `bench_compare_int32`, for the Swift comparators.
@inline(__always)
func compareInt32(_ x: Int32, _ y: Int32) -> Int32 {
    (x > y ? 1 : 0) - (x < y ? 1 : 0)
}

/// The comparator a user writes: a typed closure, which takes the register path unless it is off.
func makeQsortClosure() throws -> CClosure {
    try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
        compareInt32(a!.load(as: Int32.self), b!.load(as: Int32.self))
    }
}

/// The same comparison for a signature known only at run time.
func makeQsortInvocationClosure() throws -> CClosure {
    try CClosure(signature: CSignature(.int32, [.pointer, .pointer])) { call in
        let a = call.argument(0, as: UnsafeRawPointer?.self), b = call.argument(1, as: UnsafeRawPointer?.self)
        call.setReturnValue(compareInt32(a!.load(as: Int32.self), b!.load(as: Int32.self)))
    }
}
