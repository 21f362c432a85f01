import Foundation

/// Instructions per call from `valgrind --tool=callgrind`, which repeats where times do not: the same
/// path run twice with different call counts, the difference divided by the difference in calls, so
/// start-up and set-up cancel out.
struct Callgrind {
    let binary: String
    let calls: (Int64, Int64) = (20_000, 60_000)

    /// A copy of this program without debug info (valgrind 3.19 cannot read the toolchain's DWARF 5),
    /// or nil when valgrind or strip is missing.
    static func prepare() -> Callgrind? {
        guard let valgrind = which("valgrind"), which("strip") != nil else { return nil }
        _ = valgrind
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let copy = directory.appendingPathComponent("delegatekit-bench").path
        try? FileManager.default.removeItem(atPath: copy)  // a copy made earlier in this run
        guard let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
            (try? FileManager.default.copyItem(atPath: me, toPath: copy)) != nil,
            run("strip", ["--strip-debug", copy]) == 0
        else { return nil }
        return Callgrind(binary: copy)
    }

    /// Instructions per call of one path; `environment` is added to the measured program's (to count
    /// the libffi path with `DELEGATEKIT_FAST_PATH=0`).
    func instructionsPerCall(_ kind: PathKind, _ signature: BenchSignature, environment: [String: String] = [:]) -> Double? {
        perUnit(environment: environment) { ["--measure-one", kind.key, String(describing: signature), String($0)] }
    }

    /// Instructions to make and free one closure ("raw", "closure") or one 16-slot delegate ("delegate16"),
    /// making a `perRun`-th as many as calls are counted (fewer of the dearer things keep callgrind short).
    func instructionsPerCreation(_ what: String, perRun: Int64 = 10, environment: [String: String] = [:]) -> Double? {
        perUnit(environment: environment) { ["--measure-create", what, String($0 / perRun)] }.map { $0 * Double(perRun) }
    }

    func perUnit(environment: [String: String] = [:], _ arguments: (Int64) -> [String]) -> Double? {
        guard let few = total(arguments(calls.0), environment: environment),
            let many = total(arguments(calls.1), environment: environment)
        else { return nil }
        return Double(many - few) / Double(calls.1 - calls.0)
    }

    private func total(_ arguments: [String], environment: [String: String]) -> Int64? {
        let out = binary + "." + arguments.joined(separator: ".") + ".out"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let status = Self.run("valgrind", ["--tool=callgrind", "--callgrind-out-file=\(out)", binary] + arguments,
                              environment: environment)
        guard status == 0, let text = try? String(contentsOfFile: out, encoding: .utf8) else { return nil }
        return Self.total(in: text)
    }

    /// The instruction total of a callgrind output file.
    static func total(in text: String) -> Int64? {
        for line in text.split(separator: "\n") where line.hasPrefix("summary:") || line.hasPrefix("totals:") {
            if let value = line.split(separator: " ").dropFirst().first.flatMap({ Int64($0) }) { return value }
        }
        return nil
    }

    static func which(_ tool: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String], output: Pipe? = nil, environment: [String: String] = [:]) -> Int32 {
        guard let path = which(tool) else { return -1 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardOutput = output ?? FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
