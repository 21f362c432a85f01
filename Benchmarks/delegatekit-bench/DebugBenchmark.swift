import DelegateKitBenchmarkSupport
import Foundation

/// The benchmark of a debug build: `swift run delegatekit-bench` without `-c release`.
///
/// SwiftPM builds a dependency in debug for `swift build`, `swift run` and `swift test`, so this is the
/// DelegateKit a user meets first. The yardstick is what they would write without it: a plain
/// `@convention(c)` closure compiled in the same build (this module, like a user's, is a client of
/// DelegateKit's module). Each path is also timed with `DELEGATEKIT_FAST_PATH=0` in a child process,
/// and counted with callgrind on both paths.
enum DebugBenchmark {
    /// Each DelegateKit path beside the plain closure of its signature.
    static let rows: [(kind: PathKind, signature: BenchSignature)] = [
        (.plainClosure, .i64), (.closure, .i64), (.capturingLiteral, .i64), (.slot, .i64), (.stable, .i64),
        (.plainClosure, .f64), (.capturingLiteral, .f64), (.slot, .f64),
    ]

    struct Row {
        let kind: PathKind
        let signature: BenchSignature
        var nanoseconds: Double
        var checksumMatches: Bool
        var libffiNanoseconds = Double.nan
        var instructions = Double.nan
        var libffiInstructions = Double.nan
    }

    /// What making and freeing one of something costs in this build, counted with callgrind
    /// (`--measure-create`): raw libffi's closure from C, a `CClosure`, one of a common shape's, and a
    /// 16-slot delegate made, implemented and destroyed.
    static let creations: [(what: String, label: String, perRun: Int64)] = [
        ("raw", "raw libffi closure: alloc + prep + free", 10),
        ("closure", "`CClosure` create + destroy (`int64(int64,int64)`)", 10),
        ("comparator", "`CClosure` comparator create + destroy (`int (const void *, const void *)`)", 10),
        ("delegate16", "16-slot `DynamicDelegate`: create, implement 16, destroy", 400),
    ]

    static func main(_ arguments: [String]) {
        let quick = arguments.contains("--quick")
        let (calls, rounds): (Int64, Int) = quick ? (100_000, 3) : (400_000, 7)
        print("A debug build: timing \(rows.count) paths, \(rounds) interleaved rounds of \(calls) calls, then the same with DELEGATEKIT_FAST_PATH=0…")
        var table: [Row]
        var notes: [String] = []
        var creationCounts: [Double] = []
        do {
            table = try time(calls: calls, rounds: rounds).map {
                Row(kind: $0.kind, signature: $0.signature, nanoseconds: $0.nanoseconds, checksumMatches: $0.checksumMatches)
            }
        } catch {
            print("benchmark failed: \(error)")
            exit(1)
        }
        do {
            let child: [LibffiPathChild.CallTiming] = try LibffiPathChild.run(["--measure-debug-json", String(calls), String(rounds)])
            for index in table.indices {
                let row = table[index]
                let timing = child.first { $0.kind == row.kind.key && $0.signature == String(describing: row.signature) }
                table[index].libffiNanoseconds = timing?.nanosecondsPerCall ?? .nan
                if timing?.checksumMatches == false { table[index].checksumMatches = false }
            }
        } catch {
            notes.append("Libffi path not timed: \(error).")
        }
        if !arguments.contains("--no-callgrind") {
            if let callgrind = Callgrind.prepare() {
                print("counting instructions with callgrind on both paths…")
                for index in table.indices {
                    let (kind, signature) = (table[index].kind, table[index].signature)
                    table[index].instructions = callgrind.instructionsPerCall(kind, signature) ?? .nan
                    table[index].libffiInstructions = callgrind.instructionsPerCall(kind, signature, environment: LibffiPathChild.environment) ?? .nan
                }
                print("counting what creation costs…")
                // Fewer of the dearer things, so that callgrind's run stays short: 50 and 150 delegates.
                creationCounts = creations.map { callgrind.instructionsPerCreation($0.what, perRun: $0.perRun) ?? .nan }
            } else {
                notes.append("Instructions not counted: valgrind or strip is missing.")
            }
        }
        if LibffiPathChild.parentIsOnLibffiPath {
            notes.append("This run itself had DELEGATEKIT_FAST_PATH=0: its register-path figures are the libffi path too.")
        }
        let markdown = self.markdown(table, calls: calls, rounds: rounds, notes: notes, creationCounts: creationCounts)
        print(markdown)
        let directory = Benchmark.resultsDirectory(arguments)
        let file = directory.appendingPathComponent("results-debug.md")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try markdown.write(to: file, atomically: true, encoding: .utf8)
            print("written to \(file.path)")
        } catch {
            print("could not write the results: \(error)")
        }
    }

    /// The most instructions a call of each path may run in a debug build, on the register path and on
    /// libffi's, counted with callgrind over the C loop (`--check-debug-bounds`, which CI runs). Set from
    /// what this build measured on 2026-12-05, with room for another toolchain's code: register path 81
    /// (a `CClosure` entering `cffi_call_opaque` itself), 172 and 355; libffi's 2,691, 2,783 and 2,823. A
    /// generic call per argument (a thousand instructions a call before these bounds), a Swift frame back
    /// between the slot and the closure, or a retain and release per call on the register path would
    /// cross them.
    static let bounds: [(kind: PathKind, signature: BenchSignature, registerPath: Double, libffiPath: Double)] = [
        (.capturingLiteral, .i64, 120, 3_300), (.capturingLiteral, .f64, 240, 3_400), (.slot, .i64, 420, 3_400),
    ]

    /// The most instructions making and freeing one of ``creations``' may run in a debug build, on each
    /// path, checked with ``bounds``. Set from what this build measured on 2026-12-07 with the same room: a
    /// `CClosure` 15,306 on the register path and 12,508 on libffi's, a 16-slot delegate 1.01 and 0.96
    /// million (1.42 and 1.39 million until its slots' walks and its method lookup stopped running generic
    /// iterators that day). Generic array code per closure made (30,000 instructions until then) or a
    /// message built for each closure freed (11,000) would cross the closure's bounds; those generic walks
    /// back (about 420,000 a delegate) the delegate's.
    static let creationBounds: [(what: String, registerPath: Double, libffiPath: Double)] = [
        ("closure", 20_000, 17_000), ("delegate16", 1_320_000, 1_250_000),
    ]

    /// `--check-debug-bounds`: counts each path of ``bounds`` on both paths, prints the counts beside their
    /// bounds, and exits 1 when one is above its bound (2 when it cannot count: not a debug build, or no
    /// valgrind).
    static func checkBounds() -> Never {
        #if DEBUG
        guard let callgrind = Callgrind.prepare() else {
            print("error: cannot count instructions: valgrind or strip is missing")
            exit(2)
        }
        var over = 0
        /// Counts `label` on both paths with `count` and prints each beside its limit.
        func check(_ label: String, _ unit: String, _ limits: (register: Double, libffi: Double), _ count: ([String: String]) -> Double?) {
            for (path, environment, limit) in [("register path", [String: String](), limits.register),
                                               ("libffi path", LibffiPathChild.environment, limits.libffi)] {
                guard let count = count(environment) else {
                    print("error: \(label), \(path): callgrind failed")
                    exit(2)
                }
                let ok = count <= limit
                if !ok { over += 1 }
                print("\(ok ? "ok" : "ABOVE ITS BOUND"): \(label), \(path), debug build: "
                    + "\(count.formatted(0)) instructions \(unit) (bound \(limit.formatted(0)))")
            }
        }
        for bound in bounds {
            check("\(bound.kind.rawValue), \(bound.signature.label)", "a call", (bound.registerPath, bound.libffiPath)) {
                callgrind.instructionsPerCall(bound.kind, bound.signature, environment: $0)
            }
        }
        for bound in creationBounds {
            guard let creation = creations.first(where: { $0.what == bound.what }) else { continue }
            check(creation.label, "made and freed", (bound.registerPath, bound.libffiPath)) {
                callgrind.instructionsPerCreation(creation.what, perRun: creation.perRun, environment: $0)
            }
        }
        exit(over == 0 ? 0 : 1)
        #else
        print("error: --check-debug-bounds counts a debug build's calls: run it in one (`swift run delegatekit-bench --check-debug-bounds`)")
        exit(2)
        #endif
    }

    /// `--measure-debug-json N ROUNDS`, in the child: ``time(calls:rounds:)`` as JSON.
    static func measureJSON(_ arguments: [String]) {
        guard arguments.count >= 2, let calls = Int64(arguments[0]), let rounds = Int(arguments[1]) else { exit(2) }
        LibffiPathChild.printJSON {
            try time(calls: calls, rounds: rounds).map {
                LibffiPathChild.CallTiming(kind: $0.kind.key, signature: String(describing: $0.signature),
                                           nanosecondsPerCall: $0.nanoseconds, checksumMatches: $0.checksumMatches)
            }
        }
    }

    /// Every row timed in interleaved rounds; each checksum compared with its plain closure's.
    static func time(calls: Int64, rounds: Int) throws -> [(kind: PathKind, signature: BenchSignature, nanoseconds: Double, checksumMatches: Bool)] {
        let paths = try rows.map { try PreparedPath($0.kind, $0.signature) }
        let measured = timedAndChecked(count: paths.count, calls: calls, rounds: rounds, baseline: { index in
            paths.firstIndex { $0.signature == paths[index].signature && $0.kind == .plainClosure }!
        }) { paths[$0].run($1) }
        return paths.indices.map { (paths[$0].kind, paths[$0].signature, measured[$0].nanoseconds, measured[$0].checksumMatches) }
    }

    static func markdown(_ table: [Row], calls: Int64, rounds: Int, notes: [String], creationCounts: [Double]) -> String {
        let day = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])
        func plain(_ signature: BenchSignature) -> Row? { table.first { $0.kind == .plainClosure && $0.signature == signature } }
        var lines = [
            "# DelegateKit benchmark, debug build",
            "",
            "\(day) on \(Report.machine). `swift run delegatekit-bench`: a **debug** build, as SwiftPM builds a dependency",
            "for `swift build`, `swift run` and `swift test` (the release figures are in results.md). One process, one C loop",
            "per path; each time is the median of \(rounds) interleaved rounds of \(calls) calls. The libffi path columns are",
            "the same path with `DELEGATEKIT_FAST_PATH=0` (times from a child process, instructions from callgrind with that",
            "variable). Instructions per call include the C loop's few. Ratios are to a plain `@convention(c)` closure",
            "reading a global, compiled in the same build.",
            "",
            "| signature | path | ns/call | × plain closure | libffi path ns/call | libffi ÷ register | instructions/call | instructions, libffi path |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for row in table {
            let base = plain(row.signature)?.nanoseconds ?? .nan
            let check = row.checksumMatches ? "" : " (WRONG RESULT)"
            let isPlain = row.kind == .plainClosure
            lines.append("| \(row.signature.label) | \(row.kind.rawValue)\(check) | \(row.nanoseconds.formatted(1)) | "
                + "\(isPlain ? "1" : (row.nanoseconds / base).formatted(1)) | \(isPlain ? "" : row.libffiNanoseconds.formatted(1)) | "
                + "\(isPlain ? "" : (row.libffiNanoseconds / row.nanoseconds).formatted(1)) | \(row.instructions.formatted(0)) | "
                + "\(isPlain ? "" : row.libffiInstructions.formatted(0)) |")
        }
        if creationCounts.count == creations.count {
            lines += [
                "", "## Creation (debug)", "",
                "Instructions to make and free one, counted with callgrind in this build (`--measure-create`; raw libffi's C",
                "is compiled in this build too, libffi itself is the system's). A debug build keeps a freed closure's code",
                "in the graveyard, stopping a late call with a message.", "",
                "| made and freed | instructions | × raw libffi |", "|---|---:|---:|",
            ]
            let raw = creationCounts[0]
            for (creation, count) in zip(creations, creationCounts) {
                // The delegate makes 16 closures: its ratio is to 16 raw ones.
                let closures = creation.what == "delegate16" ? 16.0 : 1.0
                lines.append("| \(creation.label) | \(count.formatted(0)) | \(creation.what == "raw" ? "1" : (count / (raw * closures)).formatted(1) + (closures > 1 ? " (16 raw)" : "")) |")
            }
        }
        lines += ["", "## Targets (debug)", ""]
        func row(_ kind: PathKind, _ signature: BenchSignature) -> Row? { table.first { $0.kind == kind && $0.signature == signature } }
        func target(_ text: String, _ value: Double, _ ok: Bool) {
            lines.append("- \(text): \(value.formatted(1))× — \(value.isFinite && ok ? "met" : "**not met**")")
        }
        for (kind, signature, bound) in [(PathKind.capturingLiteral, BenchSignature.i64, 3.0), (.slot, .i64, 4.0), (.capturingLiteral, .f64, 3.0)] {
            guard let r = row(kind, signature), let p = plain(signature) else { continue }
            let ratio = r.nanoseconds / p.nanoseconds
            target("\(kind.rawValue), \(signature.label), at most \(bound.formatted(0))× the plain closure", ratio, ratio <= bound)
        }
        for (kind, signature) in [(PathKind.capturingLiteral, BenchSignature.i64), (.capturingLiteral, .f64), (.slot, .i64)] {
            guard let r = row(kind, signature) else { continue }
            let speedup = r.libffiNanoseconds / r.nanoseconds
            target("\(kind.rawValue), \(signature.label): the register path at least 3× faster than libffi's", speedup, speedup >= 3)
        }
        if !notes.isEmpty { lines += ["", "## Notes", ""] + notes.map { "- " + $0 } }
        return lines.joined(separator: "\n") + "\n"
    }
}
