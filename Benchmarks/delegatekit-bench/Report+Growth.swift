extension Report {
    /// Many objects alive at once: creation time and bytes per object at each size of a burst, and what
    /// destroying them all leaves behind (issue 59: flat, and given back).
    func growthTable() -> [String] {
        guard !growth.isEmpty else { return [] }
        var lines = [
            "", "## Bursts: many alive at once, then all destroyed", "",
            "Each row is a child process that makes COUNT objects, keeps them all alive, then destroys them and calls",
            "`malloc_trim(0)`. Per object: the process CPU time to make it (median of three children) and the resident or heap growth while all are alive",
            "(× raw: against raw libffi's closure at the same count). Kept: resident growth and mappings (lines of",
            "`/proc/self/maps`) left after they are all gone. Trampoline mappings whose slots are all free give their",
            "memory back and stay reserved (their words a shared read-only page that stops a late call), to be used",
            "again before any new one is made.", "",
        ] + Self.tableHeading("made", ["count", "CPU ns per object", "bytes per object alive", "kept after destroying all", "mappings kept"])
        for result in growth {
            let raw = growth.first { $0.kind == .raw && $0.count == result.count }
            var time = result.nanosecondsPerCreation.formatted(0), bytes = result.bytesPerObject.formatted(0)
            if result.kind == .closure, let raw {
                time += " (\((result.nanosecondsPerCreation / raw.nanosecondsPerCreation).formatted(2))× raw)"
                bytes += " (\((result.bytesPerObject / raw.bytesPerObject).formatted(2))× raw)"
            }
            lines.append("| \(result.kind.rawValue) | \(result.count) | \(time) | \(bytes) | "
                + "\((result.residentKept / 1_048_576).formatted(1)) MiB | \(result.mappingsKept) |")
        }
        return lines
    }

    var growthJSON: [[String: Any]] {
        growth.map {
            [
                "made": $0.kind.key, "count": $0.count, "nanosecondsPerObject": $0.nanosecondsPerCreation,
                "bytesPerObjectAlive": $0.bytesPerObject, "residentBytesKept": $0.residentKept, "mappingsKept": $0.mappingsKept,
            ]
        }
    }
}
