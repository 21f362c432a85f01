/// The qsort section of the report: one row per comparator, the libffi path's `CClosure` among them.
extension Report {
    /// One row: a label, its sorts, and the C comparator's median to divide by.
    private struct QsortRow {
        let key: String
        let label: String
        let timing: QsortTiming
        let baseline: Double
    }

    /// This process's comparators in order, with the libffi-path child's `CClosure` after the fast one.
    /// The child's row is divided by the child's own C comparator, timed in the same minute: two processes
    /// started at different moments can drift apart by more than the comparator costs.
    private var qsortRows: [QsortRow] {
        let baseline = qsort.first { $0.comparator == .c }?.milliseconds ?? .nan
        let childBaseline = libffiQsort.first { $0.comparator == .c }?.milliseconds ?? .nan
        var rows: [QsortRow] = []
        for timing in qsort {
            let fast = timing.comparator == .closure || timing.comparator == .invocation
            rows.append(QsortRow(key: timing.comparator.rawValue,
                                 label: timing.comparator.label + (fast ? ", this process (register path)" : ""),
                                 timing: timing, baseline: baseline))
            if timing.comparator == .closure, let child = libffiQsort.first(where: { $0.comparator == .closure }) {
                rows.append(QsortRow(key: "closureLibffiPath", label: timing.comparator.label + ", `DELEGATEKIT_FAST_PATH=0` child",
                                     timing: child, baseline: childBaseline))
            }
        }
        return rows
    }

    func qsortMarkdown() -> [String] {
        guard let first = qsort.first else { return [] }
        let childBaseline = libffiQsort.first { $0.comparator == .c }?.milliseconds ?? .nan
        var lines = [
            "", "## qsort of \(QsortBenchmark.count.formatted(thousands: ",")) Int32", "",
            "glibc `qsort` of the same pseudo-random array (fixed-seed LCG), a fresh copy per run; the median of "
                + "\(first.runs) runs per comparator, taken in turns; every result checked sorted. The libffi path row is the "
                + "same `CClosure` in a child process started with `DELEGATEKIT_FAST_PATH=0` right after, divided by that "
                + "child's own C comparator (\(childBaseline.formatted(1)) ms there).",
            "",
            "| comparator | ms | × plain C comparator |", "|---|---:|---:|",
        ]
        for row in qsortRows {
            let check = row.timing.allSorted ? "" : " (NOT SORTED)"
            lines.append("| \(row.label)\(check) | \(row.timing.milliseconds.formatted(1)) | \((row.timing.milliseconds / row.baseline).formatted(2)) |")
        }
        return lines
    }

    func qsortJSON() -> [String: Any] {
        [
            "count": QsortBenchmark.count,
            "runs": qsort.first?.runs ?? 0,
            "libffiPathChildCComparatorMilliseconds": libffiQsort.first { $0.comparator == .c }?.milliseconds ?? -1,
            "comparators": qsortRows.map { row -> [String: Any] in
                let ratio = row.timing.milliseconds / row.baseline
                return [
                    "comparator": row.key, "label": row.label, "milliseconds": row.timing.milliseconds,
                    "ratioToCComparator": ratio.isFinite ? ratio : -1, "allSorted": row.timing.allSorted,
                ]
            },
        ]
    }
}

extension Int {
    /// `1,000,000`.
    func formatted(thousands separator: String) -> String {
        let digits = String(magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped += separator }
            grouped.append(digit)
        }
        return (self < 0 ? "-" : "") + grouped
    }
}
