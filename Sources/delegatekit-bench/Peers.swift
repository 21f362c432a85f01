import Foundation

/// Python's ctypes and cffi callbacks through the same C loop, built as a shared library.
struct PythonPeers {
    /// ns per call by peer name and signature, or a note saying why a peer did not run.
    var results: [String: [String: Double]] = [:]
    var notes: [String] = []

    static func measure(root: URL, calls: Int64) -> PythonPeers {
        var peers = PythonPeers()
        guard Callgrind.which("python3") != nil, Callgrind.which("cc") != nil else {
            peers.notes.append("Python peers skipped: python3 or cc is missing")
            return peers
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-peers-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = directory.appendingPathComponent("libbenchloops.so").path
        let source = root.appendingPathComponent("Sources/BenchmarkSupport/loops.c").path
        guard Callgrind.run("cc", ["-O2", "-shared", "-fPIC", "-o", library, source]) == 0 else {
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
            if let timings = value as? [String: Double] {
                peers.results[peer] = timings
            } else if let note = value as? String {
                peers.notes.append("\(peer) skipped: \(note)")
            }
        }
        return peers
    }
}
