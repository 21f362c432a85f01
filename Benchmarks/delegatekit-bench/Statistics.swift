// No import: delegatekit-macro-bench compiles this file too (a link), beside the same C module.

/// The middle value (the mean of the two middle ones for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

extension Double {
    /// `12.3`, `1.08`, `—` for not measured.
    func formatted(_ digits: Int = 1) -> String {
        guard isFinite else { return "—" }
        var text = String(self.rounded(toPlaces: digits))
        if digits == 0, text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    func rounded(toPlaces digits: Int) -> Double {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

/// Each of `count` runs' median nanoseconds per call: every run `calls` calls long, the runs taken in
/// turn for `rounds` rounds, so that drift on a shared machine hits them all alike. `run(index, n)`
/// makes n calls through run `index`.
func interleavedMedians(count: Int, calls: Int64, rounds: Int, _ run: (Int, Int64) -> Void) -> [Double] {
    var samples = Array(repeating: [Double](), count: count)
    for _ in 0..<rounds {
        for index in 0..<count { samples[index].append(nanosecondsPerCall(calls) { run(index, $0) }) }
    }
    return samples.map(median)
}

/// Nanoseconds per call of `run(calls)`, which makes `calls` calls.
func nanosecondsPerCall(_ calls: Int64, _ run: (Int64) -> Void) -> Double {
    let elapsed = ContinuousClock().measure { run(calls) }
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    return nanoseconds / Double(calls)
}

/// Each of `count` runs timed in interleaved rounds (``interleavedMedians(count:calls:rounds:_:)``) after a
/// warm-up of a tenth of `calls`, and whether its checksum of 1,000 calls equals that of the run it is
/// compared with, `baseline(index)` (the same computation by the reference path). `run(index, n)` makes n
/// calls through run `index` and returns their checksum.
func timedAndChecked<Checksum: Equatable>(
    count: Int, calls: Int64, rounds: Int, baseline: (Int) -> Int, _ run: (Int, Int64) -> Checksum
) -> [(nanoseconds: Double, checksumMatches: Bool)] {
    let checks = (0..<count).map { run($0, 1_000) }
    for index in 0..<count { _ = run(index, calls / 10) }  // warm up
    let times = interleavedMedians(count: count, calls: calls, rounds: rounds) { _ = run($0, $1) }
    return (0..<count).map { (times[$0], checks[$0] == checks[baseline($0)]) }
}
