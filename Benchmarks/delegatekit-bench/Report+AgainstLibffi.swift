extension Report {
    /// Every job DelegateKit does that raw libffi also does, as its ratio to raw libffi doing it in this
    /// run (issue 59: each at most 1.0, or 1.15 where a safety step raw libffi does not take costs
    /// something), and a last line naming the rows above 1.0. Times are the medians above (wall clock of
    /// interleaved rounds, one thread); instructions are callgrind's, where counted.
    func againstLibffi() -> [String] {
        var rows: [(job: String, ratio: Double, instructions: Double?)] = []
        func add(_ job: String, _ ours: Double, _ raw: Double, _ oursInstructions: Double? = nil, _ rawInstructions: Double? = nil) {
            guard ours.isFinite, raw.isFinite, raw > 0 else { return }
            let instructions = oursInstructions.flatMap { ours in rawInstructions.map { ours / $0 } }
            rows.append((job, ours / raw, instructions.flatMap { $0.isFinite ? $0 : nil }))
        }
        for signature in BenchSignature.allCases {
            guard let raw = result(.rawLibffi, signature) else { continue }
            for kind in [PathKind.capturingLiteral, .slot, .invocation] {
                guard let r = result(kind, signature) else { continue }
                add("upcall \(signature.label), \(kind.rawValue)", r.nanoseconds, raw.nanoseconds, r.instructions, raw.instructions)
            }
        }
        for arity in Arity.allCases {
            guard let raw = arities.first(where: { $0.arity == arity && $0.path == .rawLibffi }) else { continue }
            for path in [PathKind.closure, .slot, .invocation] {
                guard let r = arities.first(where: { $0.arity == arity && $0.path == path }) else { continue }
                add("upcall \(arity.label), \(path.rawValue)", r.nanoseconds, raw.nanoseconds, r.instructions, raw.instructions)
            }
        }
        func calling(_ kind: CallingC.Kind) -> CallingC.Result? { callingC.first { $0.kind == kind } }
        // Each against raw libffi's call of the same function: a variadic one's cif from ffi_prep_cif_var.
        for (rawKind, kinds) in [(CallingC.Kind.rawFFICall, [CallingC.Kind.typed, .runTime]), (.rawFFICallVariadic, [.variadic, .runTimeVariadic])] {
            guard let raw = calling(rawKind) else { continue }
            for kind in kinds {
                guard let r = calling(kind) else { continue }
                add(kind.rawValue, r.nanoseconds, raw.nanoseconds, r.instructions, raw.instructions)
            }
        }
        if let raw = calling(.rawFFICallStruct), let r = calling(.typedStruct) {
            add(r.kind.rawValue, r.nanoseconds, raw.nanoseconds, r.instructions, raw.instructions)
        }
        add("`CClosure` create + destroy", costs.closureCreate, costs.rawCreate, costs.closureCreateInstructions, costs.rawCreateInstructions)
        add("16-slot `DynamicDelegate`: create, implement 16, destroy (against 16 raw closures)", costs.delegate16Create,
            16 * costs.rawCreate, costs.delegate16CreateInstructions, 16 * costs.rawCreateInstructions)
        add("memory per live `CClosure` (100,000 alive)", costs.closureBytes, costs.rawBytes)
        for result in growth where result.kind == .closure {
            guard let raw = growth.first(where: { $0.kind == .raw && $0.count == result.count }) else { continue }
            add("burst of \(result.count) `CClosure`s: time per closure", result.nanosecondsPerCreation, raw.nanosecondsPerCreation)
            add("burst of \(result.count) `CClosure`s: bytes per closure alive", result.bytesPerObject, raw.bytesPerObject)
        }
        guard !rows.isEmpty else { return [] }
        var lines = [
            "", "## Against raw libffi", "",
            "Each job DelegateKit does that raw libffi from C also does, in this run: DelegateKit's time ÷ raw libffi's",
            "(instructions ÷ raw libffi's where callgrind counted them). Calls into C compare with raw `ffi_call` of the",
            "same function; upcalls with a raw libffi closure and a C handler; creation with `ffi_closure_alloc` +",
            "`ffi_prep_closure_loc` + `ffi_closure_free` with one shared cif.", "",
        ] + Self.tableHeading("job", ["× raw libffi, time", "× raw libffi, instructions"])
        lines += rows.map { "| \($0.job) | \($0.ratio.formatted(2)) | \($0.instructions.map { $0.formatted(2) } ?? "–") |" }
        let above = rows.filter { $0.ratio > 1.0 }
        lines += ["", "Above 1.0 (\(above.count) of \(rows.count) rows): "
            + (above.isEmpty ? "none." : above.map { "\($0.job) \($0.ratio.formatted(2))×" }.joined(separator: "; ") + ".")]
        return lines
    }
}
