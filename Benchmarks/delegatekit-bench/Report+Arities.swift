extension Report {
    /// Callbacks of six to twelve parameters: each path's time and instructions, its ratio to raw libffi,
    /// and the target of a closure past six parameters (issue 58): at most the six-parameter closure of its
    /// kind plus a few instructions per extra parameter.
    func arityTable() -> [String] {
        var lines = [
            "", "## Callbacks of many parameters", "",
            "A typed closure of seven or eight parameters takes the fixed-arity overloads: register form where every",
            "argument arrives in a register, else libffi's argument array handed to it element by element; past eight",
            "it runs in pack form, called with that array as it is. A signature with an integer argument past the",
            "fifth is entered by DelegateKit's array entry, which makes that array where libffi's entry would (on the",
            "register path's CPUs; libffi's entry with `DELEGATEKIT_FAST_PATH=0`). Each cell: ns/call",
            "(instructions/call) × raw libffi.", "",
        ] + Self.tableHeading("callback", PathKind.arityPaths.map(\.rawValue))
        func result(_ arity: Arity, _ path: PathKind) -> ArityResult? { arities.first { $0.arity == arity && $0.path == path } }
        for arity in Arity.allCases {
            let raw = result(arity, .rawLibffi)
            let cells = PathKind.arityPaths.map { path -> String in
                guard let r = result(arity, path) else { return "—" }
                let ratio = path == .direct || path == .rawLibffi ? nil : r.nanoseconds / (raw?.nanoseconds ?? .nan)
                return Self.measuredCell(r.nanoseconds, r.instructions, ratio: ratio, digits: 2, checksumMatches: r.checksumMatches)
            }
            lines.append("| \(arity.label) | " + cells.joined(separator: " | ") + " |")
        }
        lines += ["", "Beyond six parameters, instructions per extra parameter over the six-parameter callback of the same kind",
                  "(raw libffi's own beside DelegateKit's):", ""]
        for arity in Arity.allCases where arity.parameterCount > 6 {
            let six = arity.sixParameterKin
            let parts = [PathKind.rawLibffi, .closure, .slot, .invocation].compactMap { path -> String? in
                guard let r = result(arity, path), let base = result(six, path) else { return nil }
                let perParameter = (r.instructions - base.instructions) / Double(arity.parameterCount - 6)
                return "\(path.rawValue) \(perParameter.formatted(1)) (\(r.nanoseconds.formatted(1)) ns against \(base.nanoseconds.formatted(1)))"
            }
            lines.append("- \(arity.label): " + parts.joined(separator: "; "))
        }
        return lines
    }
}
