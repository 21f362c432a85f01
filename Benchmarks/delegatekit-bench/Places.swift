import DelegateKit
import DelegateKitBenchmarkSupport
import DelegateKitFixtures
import Foundation

/// The benchmark where users run it: one table per place (this machine, another libffi, a process under
/// `PR_SET_MDWE`, aarch64 under qemu), each the few paths that say whether the register path is there and
/// what it gains, against the same run's direct call, hand-written context thunk and raw libffi.
///
/// `delegatekit-bench --place NAME --describe TEXT [--mdwe] [--counter callgrind|none|qemu=PATH] [--quick]
/// [--results-dir DIR]` measures the paths in pairs of child processes, one on each path (see
/// ``measure(calls:rounds:pairs:mdwe:)``), writes `DIR/places/NAME.md` and puts every place's table into
/// `DIR/results.md` between its markers. `Scripts/bench-places.sh` runs it in each place.
enum Places {
    /// The rows: of `int64_t (int64_t, int64_t)` and of `double (double, double)`, a `CClosure` of the
    /// global closure the hand-written thunk also calls (what the register-path issue's figures were: one
    /// addition, as every baseline does), a capturing `CClosure` literal (its capture is one more addition
    /// on the loop's chain of results, 1 cycle for an integer, 3–4 for a `double`), a slot of the integer
    /// one, and their baselines.
    static let rows: [(PathKind, BenchSignature)] = [
        (.direct, .i64), (.handWritten, .i64), (.rawLibffi, .i64), (.closure, .i64), (.capturingLiteral, .i64), (.slot, .i64),
        (.handWritten, .f64), (.rawLibffi, .f64), (.closure, .f64), (.capturingLiteral, .f64),
    ]
    /// DelegateKit's own rows: prepared first, so that the writable+executable mappings counted after them
    /// are DelegateKit's (raw libffi's closure may map one of its own, on a libffi without static
    /// trampolines).
    static func isDelegateKit(_ kind: PathKind) -> Bool { kind != .direct && kind != .handWritten && kind != .plainClosure && kind != .rawLibffi }

    /// What one path's processes measured: ns per call by row, and what making DelegateKit's closures left.
    struct Measurement {
        var nanoseconds: [Double]
        var state: Prepared.State
    }

    /// Every row's path made in one process, and what making them left in its memory.
    struct Prepared {
        let paths: [PreparedPath]
        let state: State

        /// What a process's closures found: sent by the child as its first line.
        struct State: Codable {
            var writableExecutable: Int
            var registerPath: Bool
        }

        init() throws {
            var prepared: [Int: PreparedPath] = [:]
            for (index, row) in rows.enumerated() where isDelegateKit(row.0) { prepared[index] = try PreparedPath(row.0, row.1) }
            let writableExecutable = Int(fx_writable_executable_mappings(nil, 0))
            for (index, row) in rows.enumerated() where !isDelegateKit(row.0) { prepared[index] = try PreparedPath(row.0, row.1) }
            paths = rows.indices.map { prepared[$0]! }
            let closure = paths[rows.firstIndex { $0.0 == .capturingLiteral }!]
            state = State(writableExecutable: writableExecutable, registerPath: fx_code_kind(closure.function) == 1)
        }

        func warmUp(calls: Int64) {
            for path in paths { path.run(calls / 10) }
        }

        /// One round: every row's nanoseconds per call over `calls` calls, in row order.
        func round(calls: Int64) -> [Double] {
            paths.map { path in nanosecondsPerCall(calls) { path.run($0) } }
        }
    }

    /// Measures every row on both paths, each in children of this program: `pairs` times a child on the
    /// register path and one on libffi's, started together and taking their rounds in turn (one round of
    /// every row in one, then in the other), so that a shared machine's drift falls on both columns of a
    /// row alike. Medians over every round of every pair: where a process's code and closures land
    /// matters as much as drift (between two processes of the same binary, the same row's time has moved
    /// by half), so one process of each kind would be a draw.
    static func measure(calls: Int64, rounds: Int, pairs: Int, mdwe: Bool) throws -> (here: Measurement, libffi: Measurement) {
        var samples: [[[Double]]] = [[], []], states: [Prepared.State] = []
        for _ in 0..<pairs {
            let children = try [["DELEGATEKIT_FAST_PATH": "1"], LibffiPathChild.environment].map { environment in
                guard let child = ChildProcess.startSelf(["--place-child", String(calls)] + (mdwe ? ["--mdwe"] : []),
                                                         environment: environment)
                else { throw LibffiPathChild.Failure.notStarted }
                return child
            }
            states = try children.map { try answer(Prepared.State.self, from: $0) }
            for _ in 0..<rounds {
                for (index, child) in children.enumerated() {
                    child.send("round")
                    samples[index].append(try answer([Double].self, from: child))
                }
            }
            for child in children {
                let exitCode = child.finish()
                guard exitCode == 0 else { throw LibffiPathChild.Failure.failed(exitCode: exitCode) }
            }
        }
        func measurement(_ index: Int) -> Measurement {
            Measurement(nanoseconds: rows.indices.map { row in median(samples[index].map { $0[row] }) }, state: states[index])
        }
        return (measurement(0), measurement(1))
    }

    /// A child's next line, decoded.
    private static func answer<T: Decodable>(_ type: T.Type, from child: ChildProcess.Conversation) throws -> T {
        guard let line = child.readLine() else { throw LibffiPathChild.Failure.failed(exitCode: child.finish()) }
        do { return try JSONDecoder().decode(T.self, from: Data(line.utf8)) } catch {
            throw LibffiPathChild.Failure.unreadable(String(describing: error))
        }
    }

    /// `--place-child CALLS [--mdwe]`: the rows made (on the path the environment picks), their ``Prepared/State`` printed as
    /// JSON, then one round's times, a JSON array, for each line `round` on standard input, until its end.
    static func child(_ arguments: [String]) {
        guard let calls = arguments.first.flatMap({ Int64($0) }) else { exit(2) }
        if arguments.contains("--mdwe"), fx_forbid_executable_memory() != 0 { exit(3) }
        func say<T: Encodable>(_ value: T) throws {
            // Unbuffered: the parent waits for this line.
            FileHandle.standardOutput.write(try JSONEncoder().encode(value) + Data("\n".utf8))
        }
        do {
            let prepared = try Prepared()
            try say(prepared.state)
            prepared.warmUp(calls: calls)
            while let line = readLine() {
                guard line == "round" else { exit(2) }
                try say(prepared.round(calls: calls))
            }
        } catch {
            FileHandle.standardError.write(Data("place child failed: \(error)\n".utf8))
            exit(1)
        }
    }

    static func main(_ arguments: [String]) {
        func value(_ flag: String) -> String? {
            arguments.firstIndex(of: flag).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        }
        guard let name = value("--place"), let description = value("--describe") else {
            print("usage: delegatekit-bench --place NAME --describe TEXT [--mdwe] [--counter callgrind|none|qemu=PATH] [--quick] [--results-dir DIR]")
            exit(2)
        }
        let mdwe = arguments.contains("--mdwe")
        let quick = arguments.contains("--quick")
        let calls: Int64 = quick ? 200_000 : 2_000_000
        let rounds = 5
        let pairs = quick ? 1 : 9
        let counter = value("--counter") ?? "callgrind"
        if mdwe, fx_forbid_executable_memory() != 0 {
            print("PR_SET_MDWE refused: errno \(errno)")
            exit(3)
        }
        do {
            let (here, libffi) = try measure(calls: calls, rounds: rounds, pairs: pairs, mdwe: mdwe)
            let instructions = count(with: counter, mdwe: mdwe)
            let text = table(name: name, description: description, here: here, libffi: libffi, instructions: instructions,
                             calls: calls, rounds: rounds, pairs: pairs)
            print(text)
            let directory = value("--results-dir").map { URL(fileURLWithPath: $0) }
                ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .deletingLastPathComponent().appendingPathComponent("Benchmarks")
            let places = directory.appendingPathComponent("places")
            try FileManager.default.createDirectory(at: places, withIntermediateDirectories: true)
            try text.write(to: places.appendingPathComponent("\(name).md"), atomically: true, encoding: .utf8)
            try embed(into: directory.appendingPathComponent("results.md"))
        } catch {
            print("place \(name) failed: \(error)")
            exit(1)
        }
    }

    /// Instructions per call of each row, on this path and on libffi's: from callgrind, from qemu-user's
    /// log of every instruction it runs (`qemu=PATH`), or none (a process under PR_SET_MDWE, whose
    /// children valgrind could not run in, runs the same instructions as without it).
    static func count(with counter: String, mdwe: Bool) -> [(Double?, Double?)] {
        let perUnit: (([String: String], (Int64) -> [String]) -> Double?)?
        if mdwe || counter == "none" {
            perUnit = nil
        } else if counter.hasPrefix("qemu=") {
            let qemu = QemuCounter(qemu: String(counter.dropFirst(5)))
            perUnit = { environment, arguments in qemu.perUnit(environment: environment, arguments) }
        } else if let callgrind = Callgrind.prepare() {
            perUnit = { environment, arguments in callgrind.perUnit(environment: environment, arguments) }
        } else {
            perUnit = nil
        }
        return rows.map { kind, signature in
            guard let perUnit else { return (nil, nil) }
            let arguments = { (n: Int64) in ["--measure-one", kind.key, String(describing: signature), String(n)] }
            return (perUnit([:], arguments), isDelegateKit(kind) ? perUnit(LibffiPathChild.environment, arguments) : nil)
        }
    }

    static func table(
        name: String, description: String, here: Measurement, libffi: Measurement, instructions: [(Double?, Double?)],
        calls: Int64, rounds: Int, pairs: Int
    ) -> String {
        let day = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])
        var lines = [
            "### \(name)", "",
            "\(day): \(description). Register path \(here.state.registerPath ? "taken" : "not taken"); median of \(rounds) rounds "
                + "of \(calls) calls in each of \(pairs) pairs of processes, one on each path (the libffi path: "
                + "`DELEGATEKIT_FAST_PATH=0`), the two of a pair taking their rounds in turn.", "",
            "| path | ns/call | libffi path ns/call | libffi path ÷ this | instructions/call | instructions, libffi path | instructions × hand-written thunk |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for (index, (kind, signature)) in rows.enumerated() {
            let thunk = rows.firstIndex { $0 == (.handWritten, signature) }.flatMap { instructions[$0].0 }
            let own = isDelegateKit(kind)
            let ratio = own ? (libffi.nanoseconds[index] / here.nanoseconds[index]).formatted(1) + "×" : ""
            lines.append("| \(signature.label) \(kind.rawValue) | \(here.nanoseconds[index].formatted(1)) | "
                + (own ? libffi.nanoseconds[index].formatted(1) : "") + " | \(ratio) | "
                + "\(instructions[index].0.map { $0.formatted(0) } ?? "—") | \(instructions[index].1.map { $0.formatted(0) } ?? "") | "
                + "\(own ? (instructions[index].0.flatMap { value in thunk.map { (value / $0).formatted(2) + "×" } } ?? "—") : "") |")
        }
        lines += ["", "Writable+executable mappings after making these closures: \(here.state.writableExecutable) on this path, "
            + "\(libffi.state.writableExecutable) on libffi's."]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The order in which the places' tables appear in results.md: the ones named here first.
    static let order = ["this-machine", "this-machine-mdwe", "sid-libffi-3.8.0", "aarch64-qemu"]

    /// Puts every `places/*.md` beside `results` into it, between its markers (or at its end).
    static func embed(into results: URL) throws {
        let places = results.deletingLastPathComponent().appendingPathComponent("places")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: places.path)) ?? []).filter { $0.hasSuffix(".md") }
            .map { String($0.dropLast(3)) }
        let sorted = names.sorted { (order.firstIndex(of: $0) ?? order.count, $0) < (order.firstIndex(of: $1) ?? order.count, $1) }
        let tables = try sorted.map { try String(contentsOf: places.appendingPathComponent("\($0).md"), encoding: .utf8) }
        let section = [begin, "## Where it runs", "",
                       "The same few paths in each place users run, each table from one run there (`Scripts/bench-places.sh`). "
                           + "Each names its day and machine: shared machines differ from one session to the next (the same "
                           + "binary's direct call took 1.4 ns on one and 2.3 ns on another, raw libffi 19 and 46 ns), so compare "
                           + "rows within a table, not across tables or with the tables above.", ""]
            .joined(separator: "\n") + "\n" + tables.joined(separator: "\n") + end + "\n"
        var text = (try? String(contentsOf: results, encoding: .utf8)) ?? ""
        if let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) {
            let lineEnd = text[stop.upperBound...].hasPrefix("\n") ? text.index(after: stop.upperBound) : stop.upperBound
            text.replaceSubrange(start.lowerBound..<lineEnd, with: section)
        } else {
            text += (text.isEmpty || text.hasSuffix("\n\n") ? "" : "\n") + section
        }
        try text.write(to: results, atomically: true, encoding: .utf8)
    }

    static let begin = "<!-- places:begin (written by delegatekit-bench --place) -->"
    static let end = "<!-- places:end -->"
}

/// Instructions per call counted by qemu-user, which logs every guest instruction it runs with
/// `-one-insn-per-tb -d exec,nochain`: the lines of two runs with different call counts, difference over
/// difference, as with callgrind. (Wall-clock time under an emulator says nothing of a real CPU.)
struct QemuCounter {
    let qemu: String
    let calls: (Int64, Int64) = (20_000, 120_000)

    func perUnit(environment: [String: String], _ arguments: (Int64) -> [String]) -> Double? {
        guard let few = lines(arguments(calls.0), environment), let many = lines(arguments(calls.1), environment) else { return nil }
        return Double(many - few) / Double(calls.1 - calls.0)
    }

    /// The instructions qemu ran for this program with `arguments`: its log's lines.
    private func lines(_ arguments: [String], _ environment: [String: String]) -> Int64? {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: qemu)
        process.arguments = ["-one-insn-per-tb", "-d", "exec,nochain", "-D", "/dev/stderr", me] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        var count: Int64 = 0
        let handle = pipe.fileHandleForReading
        while case let data = handle.availableData, !data.isEmpty {
            count += Int64(data.reduce(0) { $0 + ($1 == 10 ? 1 : 0) })
        }
        process.waitUntilExit()
        return process.terminationStatus == 0 ? count : nil
    }
}
