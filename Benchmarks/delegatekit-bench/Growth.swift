import DelegateKitBenchmarkSupport
import DelegateKit
import Foundation
import Glibc

/// How creation scales: many objects alive at once, made in one burst and then all destroyed. Each size
/// runs in a child process of its own, so that one size's heap and mappings do not flatter the next.
enum GrowthBenchmark {
    /// What the burst makes.
    enum Kind: String, CaseIterable {
        case raw = "raw libffi closure (one shared cif)"
        case closure = "capturing `CClosure`, `int64(int64,int64)`"
        case delegate = "16-slot `DynamicDelegate`, every slot implemented"

        /// The name `--measure-growth` takes.
        var key: String { String(describing: self) }

        /// The sizes of the burst.
        func counts(quick: Bool) -> [Int] {
            switch self {
            case .raw, .closure: return quick ? [1_000, 10_000, 100_000] : [1_000, 10_000, 100_000, 1_000_000]
            case .delegate: return quick ? [100, 1_000] : [100, 1_000, 10_000]
            }
        }
    }

    /// One burst of one size, as its child measured it.
    struct Result {
        let kind: Kind
        let count: Int
        /// Per object made: the process CPU time of making it, and the resident or heap growth it left while alive.
        let nanosecondsPerCreation: Double
        let bytesPerObject: Double
        /// After destroying them all and `malloc_trim(0)`: resident growth over the start, in bytes, and
        /// the mappings added (lines of `/proc/self/maps`).
        let residentKept: Double
        let mappingsKept: Int
    }

    /// Runs each kind at each size in a child, three times (once if `quick`): the median time, the first
    /// child's memory.
    static func measure(quick: Bool) -> [Result] {
        var results: [Result] = []
        for kind in Kind.allCases {
            for count in kind.counts(quick: quick) {
                let runs = (0..<(quick ? 1 : 3)).compactMap { _ in measureInChild(kind, count) }
                guard let first = runs.first else { continue }
                results.append(Result(
                    kind: kind, count: count, nanosecondsPerCreation: median(runs.map(\.nanosecondsPerCreation)),
                    bytesPerObject: first.bytesPerObject, residentKept: first.residentKept, mappingsKept: first.mappingsKept))
            }
        }
        return results
    }

    private static func measureInChild(_ kind: Kind, _ count: Int) -> Result? {
        guard let outcome = ChildProcess.runSelf(["--measure-growth", kind.key, String(count)], environment: [:]),
            outcome.exitCode == 0
        else { return nil }
        let fields = String(decoding: outcome.output, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard fields.count == 4 else { return nil }
        return Result(
            kind: kind, count: count, nanosecondsPerCreation: fields[0], bytesPerObject: fields[1],
            residentKept: fields[2], mappingsKept: Int(fields[3]))
    }

    /// `--measure-growth KIND COUNT`, in the child: makes COUNT objects, keeps them all, destroys them,
    /// and prints the four numbers of a ``Result``.
    static func measureOne(_ arguments: [String]) {
        guard arguments.count == 2, let kind = Kind.allCases.first(where: { $0.key == arguments[0] }),
            let count = Int(arguments[1]), count > 0
        else { exit(2) }
        // Warm up what every size shares (libffi's first mapping, the library's first table, the metadata
        // of the types), then measure from here.
        _ = try? burst(kind, 16)
        bench_trim_heap()
        let mappings = Int(bench_mapping_count())
        let start = MemoryUse.now()
        guard let (nanoseconds, alive) = try? burst(kind, count) else { exit(3) }
        bench_trim_heap()
        let end = MemoryUse.now()
        print(nanoseconds / Double(count), alive.bytes(since: start) / Double(count),
              max(0, end.resident - start.resident), Int(bench_mapping_count()) - mappings)
    }

    /// Makes `count` objects of `kind`, keeping them all; returns the time it took and the memory in use
    /// while they were alive. They are destroyed when it returns.
    @discardableResult
    private static func burst(_ kind: Kind, _ count: Int) throws -> (Double, MemoryUse) {
        switch kind {
        case .raw:
            let kept = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: count)
            defer { kept.deallocate() }
            let start = bench_cpu_now()
            _ = bench_raw_create_free(Int64(count), Int32(count), kept)
            let nanoseconds = bench_cpu_now() - start
            let alive = MemoryUse.now()
            for index in 0..<count { bench_raw_closure_free(kept[index]) }
            return (Double(nanoseconds), alive)
        case .closure:
            var closures: [CClosure] = []
            closures.reserveCapacity(count)
            let start = bench_cpu_now()
            for _ in 0..<count { closures.append(try makeCapturingLiteral(.i64)) }
            let nanoseconds = bench_cpu_now() - start
            return (Double(nanoseconds), MemoryUse.now())
        case .delegate:
            var delegates: [DynamicDelegate] = []
            delegates.reserveCapacity(count)
            let start = bench_cpu_now()
            for _ in 0..<count { delegates.append(try makeDelegate16()) }
            let nanoseconds = bench_cpu_now() - start
            return (Double(nanoseconds), MemoryUse.now())
        }
    }
}
