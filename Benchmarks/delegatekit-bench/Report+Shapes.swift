extension Report {
    /// The common callback shapes: each path's time and instructions, and its ratio to the direct call.
    func shapeTable() -> [String] {
        var lines = [
            "", "## The callback shapes C libraries use most", "",
            "Each closure captures a value, as users' closures do, and is written as a literal where it is handed",
            "over. \"Through a generic function\" hands the same literal to a function generic over the closure's",
            "types, which passes it on to `CClosure`'s generic initializer: both reach the shape's own entry. Each",
            "cell: ns/call (instructions/call) × direct.", "",
            "| shape | " + ShapePath.allCases.map(\.rawValue).joined(separator: " | ") + " |",
            "|---|" + String(repeating: "---:|", count: ShapePath.allCases.count),
        ]
        for shape in CallbackShape.allCases {
            guard let direct = shapes.first(where: { $0.shape == shape && $0.path == .direct }) else { continue }
            var cells: [String] = []
            for path in ShapePath.allCases {
                guard let r = shapes.first(where: { $0.shape == shape && $0.path == path }) else { cells.append("—"); continue }
                let check = r.checksumMatches ? "" : " (WRONG RESULT)"
                let ratio = path == .direct ? "" : " \((r.nanoseconds / direct.nanoseconds).formatted(1))×"
                cells.append("\(r.nanoseconds.formatted(1)) (\((r.instructions ?? .nan).formatted(0)))\(ratio)\(check)")
            }
            lines.append("| `\(shape.label)` | " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }
}
