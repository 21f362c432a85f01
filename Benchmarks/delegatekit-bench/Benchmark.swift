import DelegateKitBenchmarkSupport
import DelegateKit
import Foundation

/// One measured path of one signature.
struct CallResult {
    let kind: PathKind
    let signature: BenchSignature
    var nanoseconds: Double
    var instructions: Double?
    var allocationsPerCall: Double
    var checksumMatches: Bool
    /// The same path with the register path off (`DELEGATEKIT_FAST_PATH=0`), from a child process.
    var libffiNanoseconds: Double? = nil
    var libffiInstructions: Double? = nil
    var libffiChecksumMatches = true
}

enum Benchmark {
    static func main(_ arguments: [String]) {
        if let index = arguments.firstIndex(of: "--place-child") {
            return Places.child(Array(arguments[(index + 1)...]))
        }
        if arguments.contains("--place") { return Places.main(arguments) }
        if let index = arguments.firstIndex(of: "--measure-one") {
            return measureOne(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-calls-json") {
            return LibffiPathChild.measureCalls(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-qsort-json") {
            return LibffiPathChild.measureQsort(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-shape") {
            return ShapeBenchmark.measureOne(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-arity") {
            return ArityBenchmark.measureOne(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-calling") {
            return CallingC.measureOne(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-growth") {
            return GrowthBenchmark.measureOne(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-churn") {
            return measureChurnOne(Array(arguments[(index + 1)...]))
        }
        if arguments.contains("--check-debug-bounds") { DebugBenchmark.checkBounds() }
        if let index = arguments.firstIndex(of: "--measure-debug-json") {
            return DebugBenchmark.measureJSON(Array(arguments[(index + 1)...]))
        }
        if let index = arguments.firstIndex(of: "--measure-create"), index + 2 < arguments.count, let n = Int(arguments[index + 2]) {
            // For callgrind: what making and freeing n of something costs, in either build.
            switch arguments[index + 1] {
            case "raw": _ = bench_raw_create_free(Int64(n), 0, nil)
            case "closure": for _ in 0..<n { _ = try? makeClosure(.i64) }
            case "capturing": for _ in 0..<n { _ = try? makeCapturingLiteral(.i64) }
            case "comparator": for _ in 0..<n { _ = try? makeComparator() }
            case "object": for index in 0..<n { SwiftObjectFloor.pass(SwiftObjectFloor(index)) }
            default: for _ in 0..<n { _ = try? makeDelegate16() }
            }
            return
        }
        #if DEBUG
        // A debug build measures what a debug build is for: its own table, against a plain closure of the
        // same build. The release tables' figures would mean nothing here.
        return DebugBenchmark.main(arguments)
        #else
        if arguments.contains("--calling-only") {
            // Only the ways of calling C, timed (no callgrind, no report): quick to compare.
            do {
                for result in try CallingC.measure(calls: 2_000_000, rounds: 5) {
                    print("\(result.kind.rawValue): \(result.nanoseconds.formatted(1)) ns")
                }
            } catch {
                print("calling C failed: \(error)")
                exit(1)
            }
            return
        }
        if arguments.contains("--shapes-only") {
            // Only the common callback shapes (with callgrind unless --no-callgrind): quick to compare.
            var report = Report(calls: 2_000_000, rounds: 9)
            report.shapes = (try? ShapeBenchmark.measure(calls: 2_000_000, rounds: 9)) ?? []
            if !arguments.contains("--no-callgrind"), let callgrind = Callgrind.prepare() {
                for index in report.shapes.indices {
                    let (path, shape) = (report.shapes[index].path, report.shapes[index].shape)
                    report.shapes[index].instructions = callgrind.perUnit { ["--measure-shape", path.key, "\(shape)", String($0)] }
                }
            }
            print(report.shapeTable().joined(separator: "\n"))
            return
        }
        if arguments.contains("--arities-only") {
            // Only the callbacks of many parameters (with callgrind unless --no-callgrind): quick to compare.
            var report = Report(calls: 2_000_000, rounds: 9)
            report.arities = (try? ArityBenchmark.measure(calls: 2_000_000, rounds: 9)) ?? []
            if !arguments.contains("--no-callgrind"), let callgrind = Callgrind.prepare() {
                ArityBenchmark.countInstructions(&report.arities, callgrind)
            }
            print(report.arityTable().joined(separator: "\n"))
            return
        }
        if arguments.contains("--bursts-only") {
            // Only the bursts of many closures and delegates: quick to compare.
            var report = Report(calls: 0, rounds: 0)
            report.growth = GrowthBenchmark.measure(quick: arguments.contains("--quick"))
            print(report.growthTable().joined(separator: "\n"))
            return
        }
        if arguments.contains("--churn-only") {
            // Only the long-lived delegate's cycles: quick to compare two versions of the library.
            for cost in (try? measureChurn(cycles: 200_000)) ?? [] {
                print("\(cost.kind.rawValue): \(cost.nanoseconds.formatted(0)) ns, \(cost.bytesKeptPerCycle.formatted(1)) bytes kept per cycle")
            }
            return
        }
        let quick = arguments.contains("--quick")
        let calls: Int64 = quick ? 200_000 : 2_000_000
        let rounds = quick ? 5 : 9
        var report = Report(calls: calls, rounds: rounds)

        do {
            print("timing \(PathKind.allCases.count) paths × \(BenchSignature.allCases.count) signatures, \(rounds) interleaved rounds of \(calls) calls…")
            report.calls = try timeCalls(calls: calls, rounds: rounds)
            print("the same with DELEGATEKIT_FAST_PATH=0, in a child process…")
            do {
                report.calls.merge(libffiPath: try LibffiPathChild.timeCalls(calls: calls, rounds: rounds))
            } catch {
                report.notes.append("Libffi path not timed: \(error).")
            }
            if LibffiPathChild.parentIsOnLibffiPath {
                report.notes.append("This run itself had DELEGATEKIT_FAST_PATH=0: its \"fast path\" figures are the libffi path too.")
            }
            print("the common callback shapes, \(ShapePath.allCases.count) paths × \(CallbackShape.allCases.count) shapes…")
            report.shapes = try ShapeBenchmark.measure(calls: calls, rounds: rounds)
            print("callbacks of six to twelve parameters, \(PathKind.arityPaths.count) paths × \(Arity.allCases.count) arities…")
            report.arities = try ArityBenchmark.measure(calls: calls, rounds: rounds)
            print("creation, memory and threads…")
            report.costs = try measureCosts(quick: quick)
            print("bursts of closures and delegates, each size in a child…")
            report.growth = GrowthBenchmark.measure(quick: quick)
            if !arguments.contains("--no-callgrind") {
                if let callgrind = Callgrind.prepare() {
                    print("counting instructions with callgrind, each path as it is and with DELEGATEKIT_FAST_PATH=0…")
                    for index in report.calls.indices {
                        let (kind, signature) = (report.calls[index].kind, report.calls[index].signature)
                        report.calls[index].instructions = callgrind.instructionsPerCall(kind, signature)
                        report.calls[index].libffiInstructions = callgrind.instructionsPerCall(
                            kind, signature, environment: LibffiPathChild.environment)
                    }
                    for index in report.shapes.indices {
                        let (path, shape) = (report.shapes[index].path, report.shapes[index].shape)
                        report.shapes[index].instructions = callgrind.perUnit { ["--measure-shape", path.key, "\(shape)", String($0)] }
                    }
                    ArityBenchmark.countInstructions(&report.arities, callgrind)
                    report.costs.rawCreateInstructions = callgrind.instructionsPerCreation("raw") ?? .nan
                    report.costs.closureCreateInstructions = callgrind.instructionsPerCreation("closure") ?? .nan
                    report.costs.objectCreateInstructions = callgrind.instructionsPerCreation("object") ?? .nan
                    report.costs.delegate16CreateInstructions = callgrind.instructionsPerCreation("delegate16") ?? .nan
                } else {
                    report.notes.append("Instructions not counted: valgrind or strip is missing.")
                }
            }
            report.threads = try measureThreads(calls: calls, rounds: quick ? 5 : 11)
            let sorts = quick ? 3 : 5
            print("qsort of \(QsortBenchmark.count) Int32, \(sorts) runs per comparator, then the libffi path in a child process…")
            report.qsort = try QsortBenchmark.measure(QsortComparator.allCases, runs: sorts)
            do {
                // The child's own C comparator too, so its closure's ratio is to a sort of the same moment.
                report.libffiQsort = try LibffiPathChild.measureQsort([.c, .closure], runs: sorts)
            } catch {
                report.notes.append("qsort on the libffi path not timed: \(error).")
            }
            print("calling C: \(CallingC.Kind.allCases.count) ways, \(rounds) interleaved rounds of \(calls) calls…")
            report.callingC = try CallingC.measure(calls: calls, rounds: rounds)
            if !arguments.contains("--no-callgrind"), let callgrind = Callgrind.prepare() {
                for index in report.callingC.indices {
                    let kind = report.callingC[index].kind
                    report.callingC[index].instructions = callgrind.perUnit { ["--measure-calling", kind.key, String($0)] }
                }
            }
            if !arguments.contains("--no-peers") {
                print("Python peers…")
                // Our int64 closure timed right before and after, so the time ratio compares one moment.
                let closure = try PreparedPath(.closure, .i64)
                func timeClosure() -> Double {
                    let start = bench_now()
                    closure.run(calls)
                    return Double(bench_now() - start) / Double(calls)
                }
                let before = timeClosure()
                let peers = PythonPeers.measure(root: root, calls: quick ? 50_000 : 200_000,
                                                callgrind: !arguments.contains("--no-callgrind"))
                report.peerBaseline = median([before, timeClosure()])
                report.peers = peers.results
                report.pythonCalling = peers.calling
                report.peerInstructions = peers.instructions
                report.notes += peers.notes
            }
        } catch {
            print("benchmark failed: \(error)")
            exit(1)
        }
        let markdown = report.markdown()
        print(markdown)
        let directory = resultsDirectory(arguments)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let markdownFile = directory.appendingPathComponent("results.md"), jsonFile = directory.appendingPathComponent("results.json")
            try markdown.write(to: markdownFile, atomically: true, encoding: .utf8)
            try Places.embed(into: markdownFile)  // the places' tables, which their own runs wrote
            try report.json().write(to: jsonFile)
            print("written to \(markdownFile.path) and \(jsonFile.path)")
        } catch {
            print("could not write the results: \(error)")
        }
        #endif
    }

    /// Where the results go: Benchmarks/, or the DIR of `--results-dir DIR`, for trying the benchmark out
    /// without replacing the recorded results.
    static func resultsDirectory(_ arguments: [String]) -> URL {
        arguments.firstIndex(of: "--results-dir").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
            .map { URL(fileURLWithPath: $0) } ?? root.appendingPathComponent("Benchmarks")
    }

    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `--measure-one KIND SIGNATURE N`: set up one path and run it N times (for callgrind).
    static func measureOne(_ arguments: [String]) {
        guard arguments.count == 3, let kind = PathKind.allCases.first(where: { $0.key == arguments[0] }),
            let signature = BenchSignature.allCases.first(where: { "\($0)" == arguments[1] }), let n = Int64(arguments[2]),
            let path = try? PreparedPath(kind, signature)
        else { exit(2) }
        path.run(n)
    }

    /// Every path of every signature, timed in interleaved rounds so drift hits all alike.
    static func timeCalls(calls: Int64, rounds: Int) throws -> [CallResult] {
        var paths: [PreparedPath] = []
        for signature in BenchSignature.allCases {
            for kind in PathKind.allCases { paths.append(try PreparedPath(kind, signature)) }
        }
        // The same computation everywhere: each path's checksum must equal the direct call's.
        let checks = paths.map { $0.run(1_000) }
        var allocations = Array(repeating: 0.0, count: paths.count)
        for (index, path) in paths.enumerated() {
            path.run(calls / 10)  // warm up
            let before = bench_allocations()
            path.run(100_000)
            allocations[index] = Double(bench_allocations() - before) / 100_000
        }
        let times = interleavedMedians(count: paths.count, calls: calls, rounds: rounds) { paths[$0].run($1) }
        return paths.indices.map { index in
            let path = paths[index]
            let direct = paths.firstIndex { $0.signature == path.signature && $0.kind == .direct }!
            return CallResult(kind: path.kind, signature: path.signature, nanoseconds: times[index],
                              instructions: nil, allocationsPerCall: allocations[index],
                              checksumMatches: checks[index] == checks[direct])
        }
    }

    /// What the rare operations cost: creating closures and delegates, implement/remove, memory.
    static func measureCosts(quick: Bool) throws -> Costs {
        var costs = Costs()
        let n: Int64 = quick ? 20_000 : 100_000
        costs.rawCreate = Double(bench_raw_create_free(n, 0, nil)) / Double(n)

        var start = bench_now()
        for _ in 0..<n { _ = try makeClosure(.i64) }
        costs.closureCreate = Double(bench_now() - start) / Double(n)

        let delegates = n / 10
        start = bench_now()
        for _ in 0..<delegates { _ = try makeDelegate16() }
        costs.delegate16Create = Double(bench_now() - start) / Double(delegates)

        costs.churn = try measureChurn(cycles: Int(n))

        // Memory per live closure: resident memory and heap in use, 100,000 alive at once.
        let live = 100_000
        let kept = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: live)
        defer { kept.deallocate() }
        var before = MemoryUse.now()
        _ = bench_raw_create_free(Int64(live), Int32(live), kept)
        costs.rawBytes = MemoryUse.now().bytes(since: before) / Double(live)
        for index in 0..<live { bench_raw_closure_free(kept[index]) }

        var closures: [CClosure] = []
        closures.reserveCapacity(live)
        before = MemoryUse.now()
        for _ in 0..<live { closures.append(try makeClosure(.i64)) }
        costs.closureBytes = MemoryUse.now().bytes(since: before) / Double(live)
        closures.removeAll()
        return costs
    }

    /// Throughput of two C threads calling one function at once, against one thread: the ratio of the
    /// median times, every path's one- and two-thread runs interleaved round by round.
    static func measureThreads(calls: Int64, rounds: Int) throws -> [(PathKind, Double)] {
        let paths = try [PathKind.direct, .rawLibffi, .closure, .slot, .stacked].map { try PreparedPath($0, .i64) }
        var one = Array(repeating: [Double](), count: paths.count)
        var two = Array(repeating: [Double](), count: paths.count)
        for _ in 0..<rounds {
            for (index, path) in paths.enumerated() {
                one[index].append(Double(bench_threads_i64(path.function, calls, 1)))
                two[index].append(Double(bench_threads_i64(path.function, calls, 2)))
            }
        }
        return paths.indices.map { (paths[$0].kind, 2 * median(one[$0]) / median(two[$0])) }
    }
}

let sixteenMethods = ProtocolDescriptor(name: "sixteen", methods: (0..<16).map {
    MethodDescriptor(name: "m\($0)", signature: BenchSignature.i64.cSignature)
})

/// A 16-slot delegate with every slot implemented.
func makeDelegate16() throws -> DynamicDelegate {
    let delegate = DynamicDelegate(protocol: sixteenMethods)
    for method in sixteenMethods.methods { try delegate.implement(method.name, addI64) }
    return delegate
}

/// Resident memory and heap in use, to measure what live objects cost.
struct MemoryUse {
    let resident: Double
    let heap: Double

    static func now() -> MemoryUse {
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        return MemoryUse(resident: pages * Double(sysconf(Int32(_SC_PAGESIZE))), heap: Double(bench_heap_in_use()))
    }

    /// The larger of the resident and heap growth: libffi's closures live in pages it maps itself.
    func bytes(since start: MemoryUse) -> Double {
        max(resident - start.resident, heap - start.heap)
    }
}

struct Costs {
    var rawCreate = Double.nan, closureCreate = Double.nan, delegate16Create = Double.nan
    var churn: [ChurnCost] = []
    var rawBytes = Double.nan, closureBytes = Double.nan
    var rawCreateInstructions = Double.nan, closureCreateInstructions = Double.nan, delegate16CreateInstructions = Double.nan
    /// What the least Swift class instance costs to allocate and free (``SwiftObjectFloor``).
    var objectCreateInstructions = Double.nan
}

/// The least any instance of a Swift class costs, made and freed: three words of its own, handed to a
/// function the optimizer does not see into, so that it is allocated on the heap (an object that goes
/// nowhere is allocated on the stack, or not at all). A `CClosure` is such an object, and so is the
/// object holding its closure: what creation is measured against beside raw libffi's closure.
final class SwiftObjectFloor {
    let words: (Int, Int, Int)

    init(_ value: Int) { words = (value, value, value) }

    @inline(never)
    static func pass(_ object: SwiftObjectFloor) {
        if object.words.0 == -1 { print(object.words) }
    }
}
