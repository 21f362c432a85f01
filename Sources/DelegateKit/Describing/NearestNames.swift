/// The names a mistyped member name was probably meant to be, for "did you mean …?" in errors.
///
/// Why edit distance: the usual mistakes with C member names are a letter dropped, doubled or swapped
/// (`xMaloc`, `transfrom`) or the wrong case (`XRead`); a distance small relative to the name's length
/// catches those without suggesting unrelated short names (`log` for `map`).
enum NearestNames {
    /// At most this many suggestions: more would bury the right one.
    static let limit = 3

    /// The names in `candidates` close to `name`, nearest first (declaration order among equals).
    /// Case is ignored when measuring, so a name differing only in case is always suggested first.
    static func nearest(to name: String, in candidates: [String]) -> [String] {
        let target = Array(name.lowercased())
        // A third of the length, at least 1, at most 3: "xRead" tolerates 1 edit, "transfrom" 3.
        let threshold = min(3, max(1, target.count / 3))
        let scored = candidates.enumerated().compactMap { index, candidate -> (distance: Int, index: Int, name: String)? in
            guard candidate != name else { return nil }
            let distance = editDistance(target, Array(candidate.lowercased()))
            return distance <= threshold ? (distance, index, candidate) : nil
        }
        return scored.sorted { ($0.distance, $0.index) < ($1.distance, $1.index) }.prefix(limit).map(\.name)
    }

    /// "; did you mean 'a'?", "; did you mean 'a' or 'b'?", "; did you mean 'a', 'b' or 'c'?", or "".
    static func phrase(_ suggestions: [String]) -> String {
        guard let last = suggestions.last else { return "" }
        let quoted = suggestions.dropLast().map { "'\($0)'" }
        let list = quoted.isEmpty ? "'\(last)'" : quoted.joined(separator: ", ") + " or '\(last)'"
        return "; did you mean \(list)?"
    }

    /// Edits (insert, delete, substitute, or swap two neighbours) from `a` to `b`: the optimal string
    /// alignment distance, so a swapped pair of letters costs 1 like any other typo.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows of the usual table: the one before last is needed for swaps.
        var beforeLast = [Int](repeating: 0, count: b.count + 1)
        var last = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(last[j] + 1, current[j - 1] + 1, last[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforeLast[j - 2] + 1)
                }
            }
            (beforeLast, last, current) = (last, current, beforeLast)
        }
        return last[b.count]
    }
}
