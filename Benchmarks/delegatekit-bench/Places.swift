import DelegateKit
import DelegateKitBenchmarkSupport
import DelegateKitFixtures
import Foundation

/// The benchmark where users run it: one table per place (this machine, another libffi, a process under
/// `PR_SET_MDWE`, aarch64 under qemu), each the few paths that say whether the register path is there and
/// what it gains, against the same run's direct call, hand-written context thunk and raw libffi.
///
/// `delegatekit-bench --place NAME --describe TEXT [--mdwe] [--counter callgrind|none|qemu=PATH] [--quick]
/// [--results-dir DIR]` measures this process's paths (and, in a child, the same with
/// `DELEGATEKIT_FAST_PATH=0`), writes `DIR/places/NAME.md` and puts every place's table into
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
    static func isDelegateKit(_ kind: PathKind) -> Bool { kind != .direct && kind != .handWritten && kind != .rawLibffi }

    /// What one process measured: ns per call by row, and the writable+executable mappings after making
    /// DelegateKit's closures.
    struct Measurement: Codable {
        var nanoseconds: [Double]
        var writableExecutable: Int
        var registerPath: Bool
    }

    /// Measures every row in this process.
    static func measure(calls: Int64, rounds: Int) throws -> Measurement {
        var prepared: [Int: PreparedPath] = [:]
        for (index, row) in rows.enumerated() where isDelegateKit(row.0) { prepared[index] = try PreparedPath(row.0, row.1) }
        let writableExecutable = Int(fx_writable_executable_mappings(nil, 0))
        for (index, row) in rows.enumerated() where !isDelegateKit(row.0) { prepared[index] = try PreparedPath(row.0, row.1) }
        let paths = rows.indices.map { prepared[$0]! }
        for path in paths { path.run(calls / 10) }  // warm up
        let times = interleavedMedians(count: paths.count, calls: calls, rounds: rounds) { paths[$0].run($1) }
        let closure = paths[rows.firstIndex { $0.0 == .capturingLiteral }!]
        return Measurement(nanoseconds: times, writableExecutable: writableExecutable,
                           registerPath: fx_code_kind(closure.function) == 1)
    }

    /// `--place-child CALLS ROUNDS`: ``measure(calls:rounds:)`` as JSON, for the parent's libffi-path column.
    static func child(_ arguments: [String]) {
        guard arguments.count >= 2, let calls = Int64(arguments[0]), let rounds = Int(arguments[1]) else { exit(2) }
        if arguments.contains("--mdwe"), fx_forbid_executable_memory() != 0 { exit(3) }
        do {
            print(String(decoding: try JSONEncoder().encode(measure(calls: calls, rounds: rounds)), as: UTF8.self))
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
        let rounds = quick ? 5 : 9
        let counter = value("--counter") ?? "callgrind"
        if mdwe, fx_forbid_executable_memory() != 0 {
            print("PR_SET_MDWE refused: errno \(errno)")
            exit(3)
        }
        do {
            let here = try measure(calls: calls, rounds: rounds)
            guard let outcome = ChildProcess.runSelf(
                ["--place-child", String(calls), String(rounds)] + (mdwe ? ["--mdwe"] : []), environment: LibffiPathChild.environment),
                outcome.exitCode == 0
            else { throw LibffiPathChild.Failure.failed(exitCode: nil) }
            let libffi = try JSONDecoder().decode(Measurement.self, from: Data(outcome.output))
            let instructions = count(with: counter, mdwe: mdwe)
            let text = table(name: name, description: description, here: here, libffi: libffi, instructions: instructions,
                             calls: calls, rounds: rounds)
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
        calls: Int64, rounds: Int
    ) -> String {
        let day = ISO8601DateFormatter.string(from: Date(), timeZone: .gmt, formatOptions: [.withFullDate])
        var lines = [
            "### \(name)", "",
            "\(day): \(description). Register path \(here.registerPath ? "taken" : "not taken"); median of \(rounds) rounds "
                + "of \(calls) calls; the libffi path is the same binary with `DELEGATEKIT_FAST_PATH=0`.", "",
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
        lines += ["", "Writable+executable mappings after making these closures: \(here.writableExecutable) on this path, "
            + "\(libffi.writableExecutable) on libffi's."]
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
                       "The same few paths in each place users run, each table from one run there (`Scripts/bench-places.sh`).", ""]
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
