import Foundation

/// The libffi path measured beside the register path in the same run.
///
/// `DELEGATEKIT_FAST_PATH=0` turns the register path off for a whole process, read once at start, so
/// the libffi figures come from a child: this same executable, started right after the parent's own
/// measurement with that variable set and a hidden option, measures exactly as the parent does and
/// prints JSON on its standard output. Each table row then shows both paths, measured minutes apart
/// on the same machine rather than in runs of different days.
enum LibffiPathChild {
    /// The variable the library reads, and the value that forces every closure through libffi.
    static let environment = ["DELEGATEKIT_FAST_PATH": "0"]

    /// Whether this process itself was started with the register path off, in which case the
    /// "fast path" figures are the libffi path too.
    static var parentIsOnLibffiPath: Bool {
        ProcessInfo.processInfo.environment["DELEGATEKIT_FAST_PATH"] == "0"
    }

    /// One path of one signature as the child measured it.
    struct CallTiming: Codable {
        /// ``PathKind/key``.
        let kind: String
        /// The ``BenchSignature`` case name.
        let signature: String
        let nanosecondsPerCall: Double
        let checksumMatches: Bool
    }

    enum Failure: Error, CustomStringConvertible {
        case notStarted
        case failed(exitCode: Int32?)
        case unreadable(String)

        var description: String {
            switch self {
            // Also a place's children, one of which runs on the register path.
            case .notStarted: return "a child process of the benchmark could not be started"
            case .failed(let code): return "a child process of the benchmark failed (\(code.map { "exit code \($0)" } ?? "killed by a signal"))"
            case .unreadable(let error): return "a child process's output is not the expected JSON: \(error)"
            }
        }
    }

    // MARK: In the child

    /// `--measure-calls-json N ROUNDS`: ``Benchmark/timeCalls(calls:rounds:)`` with these numbers, its
    /// times printed as a JSON array of ``CallTiming`` and nothing else.
    static func measureCalls(_ arguments: [String]) {
        guard arguments.count >= 2, let calls = Int64(arguments[0]), let rounds = Int(arguments[1]) else { exit(2) }
        printJSON {
            try Benchmark.timeCalls(calls: calls, rounds: rounds).map {
                CallTiming(kind: $0.kind.key, signature: String(describing: $0.signature),
                           nanosecondsPerCall: $0.nanoseconds, checksumMatches: $0.checksumMatches)
            }
        }
    }

    /// `--measure-qsort-json RUNS COMPARATOR...`: ``QsortBenchmark/measure(_:runs:)`` of the named
    /// comparators, printed as a JSON array of ``QsortTiming``.
    static func measureQsort(_ arguments: [String]) {
        guard let runs = arguments.first.flatMap({ Int($0) }) else { exit(2) }
        let comparators = arguments.dropFirst().prefix { !$0.hasPrefix("--") }.compactMap { QsortComparator(rawValue: $0) }
        printJSON { try QsortBenchmark.measure(comparators, runs: runs) }
    }

    static func printJSON<T: Encodable>(_ measure: () throws -> T) {
        do {
            let data = try JSONEncoder().encode(measure())
            print(String(decoding: data, as: UTF8.self))
        } catch {
            FileHandle.standardError.write(Data("libffi-path child failed: \(error)\n".utf8))
            exit(1)
        }
    }

    // MARK: In the parent

    /// The child's times of every path × signature, `calls` calls in `rounds` rounds as in the parent.
    static func timeCalls(calls: Int64, rounds: Int) throws -> [CallTiming] {
        try run(["--measure-calls-json", String(calls), String(rounds)])
    }

    /// The child's qsort times of `comparators`, `runs` runs each.
    static func measureQsort(_ comparators: [QsortComparator], runs: Int) throws -> [QsortTiming] {
        try run(["--measure-qsort-json", String(runs)] + comparators.map(\.rawValue))
    }

    static func run<T: Decodable>(_ arguments: [String]) throws -> T {
        guard let outcome = ChildProcess.runSelf(arguments, environment: environment) else { throw Failure.notStarted }
        guard outcome.exitCode == 0 else { throw Failure.failed(exitCode: outcome.exitCode) }
        do {
            return try JSONDecoder().decode(T.self, from: Data(outcome.output))
        } catch {
            throw Failure.unreadable(String(describing: error))
        }
    }
}

extension Array where Element == CallResult {
    /// Adds the child's libffi-path times to the rows of the same path and signature.
    mutating func merge(libffiPath timings: [LibffiPathChild.CallTiming]) {
        for index in indices {
            let row = self[index]
            guard let timing = timings.first(where: { $0.kind == row.kind.key && $0.signature == String(describing: row.signature) })
            else { continue }
            self[index].libffiNanoseconds = timing.nanosecondsPerCall
            self[index].libffiChecksumMatches = timing.checksumMatches
        }
    }
}
