import Foundation

/// Python's ctypes and cffi callbacks through the same C loop, built as a shared library.
struct PythonPeers {
    /// ns per call by peer name and signature, or a note saying why a peer did not run.
    var results: [String: [String: Double]] = [:]
    /// Instructions per call of each peer's int64 callback, from callgrind.
    var instructions: [String: Double] = [:]
    /// ns per call of Python calling `bench_add_i64`, by peer.
    var calling: [String: Double] = [:]
    var notes: [String] = []

    static func measure(root: URL, calls: Int64, callgrind: Bool) -> PythonPeers {
        var peers = PythonPeers()
        guard Callgrind.which("python3") != nil, Callgrind.which("cc") != nil else {
            peers.notes.append("Python peers skipped: python3 or cc is missing")
            return peers
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-peers-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = directory.appendingPathComponent("libbenchloops.so").path
        let source = root.appendingPathComponent("Benchmarks/BenchmarkSupport/loops.c").path
        guard Callgrind.run("cc", ["-O2", "-shared", "-fPIC", "-o", library, source, "-lffi"]) == 0 else {
            peers.notes.append("Python peers skipped: could not build the loop library")
            return peers
        }
        let output = Pipe()
        let script = root.appendingPathComponent("Benchmarks/peers.py").path
        _ = Callgrind.run("python3", [script, library, String(calls)], output: output)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            peers.notes.append("Python peers failed: no results from Benchmarks/peers.py")
            return peers
        }
        for (peer, value) in json {
            if peer == "calling", let timings = value as? [String: Double] {
                peers.calling = timings
            } else if let timings = value as? [String: Double] {
                peers.results[peer] = timings
            } else if let note = value as? String {
                peers.notes.append("\(peer) skipped: \(note)")
            }
        }
        // Times of a separate process at another moment drift with this machine's clock; instructions
        // do not. Two call counts under callgrind, difference over difference, as for DelegateKit's paths.
        if callgrind, Callgrind.which("valgrind") != nil, let python = pythonExecutable() {
            for peer in peers.results.keys {
                let totals = [20_000, 40_000].map { n -> Int64? in
                    let out = directory.appendingPathComponent("\(peer).\(n).out").path
                    let status = Callgrind.run("valgrind", ["--tool=callgrind", "--callgrind-out-file=\(out)",
                                                            python, script, library, String(n), peer])
                    guard status == 0, let text = try? String(contentsOfFile: out, encoding: .utf8) else { return nil }
                    return Callgrind.total(in: text)
                }
                if let few = totals[0], let many = totals[1] { peers.instructions[peer] = Double(many - few) / 20_000 }
            }
        }
        return peers
    }

    /// The interpreter itself: `python3` may be a launcher script (pyenv), which valgrind would trace instead.
    static func pythonExecutable() -> String? {
        let output = Pipe()
        guard Callgrind.run("python3", ["-c", "import sys; print(sys.executable)"], output: output) == 0 else { return nil }
        let path = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return path.isEmpty ? nil : path
    }
}
