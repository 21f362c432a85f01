extension Report {
    /// The common callback shapes: each path's time and instructions, and its ratio to the direct call.
    func shapeTable() -> [String] {
        var lines = [
            "", "## The callback shapes C libraries use most", "",
            "Each closure captures a value, as users' closures do, and is written as a literal where it is handed",
            "over. \"Through a generic function\" hands the same literal to a function generic over the closure's",
            "types, which passes it on to `CClosure`'s generic initializer: both reach the shape's own entry. Each",
            "cell: ns/call (instructions/call) × direct.", "",
        ] + Self.tableHeading("shape", ShapePath.allCases.map(\.rawValue))
        for shape in CallbackShape.allCases {
            guard let direct = shapes.first(where: { $0.shape == shape && $0.path == .direct }) else { continue }
            var cells: [String] = []
            for path in ShapePath.allCases {
                guard let r = shapes.first(where: { $0.shape == shape && $0.path == path }) else { cells.append("—"); continue }
                cells.append(Self.measuredCell(
                    r.nanoseconds, r.instructions ?? .nan, ratio: path == .direct ? nil : r.nanoseconds / direct.nanoseconds,
                    digits: 1, checksumMatches: r.checksumMatches))
            }
            lines.append("| `\(shape.label)` | " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }
}

extension Report {
    /// A table's heading and its rule: the first column, then one right-aligned column per name.
    static func tableHeading(_ first: String, _ columns: [String]) -> [String] {
        ["| \(first) | " + columns.joined(separator: " | ") + " |", "|---|" + String(repeating: "---:|", count: columns.count)]
    }

    /// A measured cell: `ns (instructions)`, then the ratio to the table's reference with `digits`
    /// decimals where there is one, marked when the checksum was not the direct call's.
    static func measuredCell(_ nanoseconds: Double, _ instructions: Double, ratio: Double?, digits: Int, checksumMatches: Bool) -> String {
        let ratio = ratio.map { " \($0.formatted(digits))×" } ?? ""
        return "\(nanoseconds.formatted(1)) (\(instructions.formatted(0)))\(ratio)" + (checksumMatches ? "" : " (WRONG RESULT)")
    }
}
