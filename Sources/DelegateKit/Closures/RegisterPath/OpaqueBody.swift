/// The register form of a closure in a debug build, where nothing is specialized: a call then runs no
/// generic code at all.
///
/// SwiftPM builds a package's dependencies unoptimized for `swift build`, `swift run` and `swift test`, so
/// a typed thunk's register form (`CallThunk.typed`) runs as generic code there: every argument read and
/// the result written through its type's metadata and witnesses, about a thousand instructions a call. But
/// a function value that has passed through a generic parameter is stored in its most general form:
/// every argument by address, the result through the indirect-result register, whatever the types. So
/// one piece of assembly, `cffi_call_opaque` (`TrampolineTable.S`), calls any such closure: it stores the
/// argument registers in a block, as libffi's argument array would hold them (``RegisterLayout``'s
/// offsets), and passes their addresses; the closure's own reabstraction thunk, which the compiler made
/// where its types were concrete, reads them. An optimized build specializes the typed thunks instead,
/// which costs less still, and leaves this aside.
@usableFromInline
enum OpaqueBody {
    /// The call of `function`, a closure of `prepared`'s signature whose Swift types fit its C types byte
    /// for byte (what `CallThunk.typed` makes sure of), or nil where the typed thunk's own register form
    /// serves: in an optimized build, for a signature that does not take registers or has more than six
    /// arguments, or where the tests ask for the typed form (``withoutOpaqueCalls(_:)``). A `CClosure`
    /// enters it directly (``TrampolineShim/opaqueEntry``); a slot runs its ``OpaqueCall/body``.
    @usableFromInline
    static func call<Function>(_ function: Function, _ prepared: PreparedSignature) -> OpaqueCall? {
        #if DEBUG
        guard let layout = prepared.registerLayout, layout.argumentCount <= 6,
            !TrampolineShim.opaqueCallsSuppressedHere,
            MemoryLayout<Function>.size == MemoryLayout<(UnsafeRawPointer, UnsafeRawPointer?)>.size
        else { return nil }
        // The value as `Function` is in its most general form; the call keeps it, and so its context.
        let words = unsafeBitCast(function, to: (code: UnsafeRawPointer, context: UnsafeRawPointer?).self)
        return TrampolineShim.opaqueCall(
            function: words.code, context: words.context, layout: layout,
            resultShift: resultShift(prepared.signature.returnType), owner: function)
        #else
        return nil
        #endif
    }

    /// How far a result of `type` is shifted left and back to sign-extend it to 64 bits, as the typed
    /// thunks widen it.
    static func resultShift(_ type: CType) -> Int {
        switch type {
        case .int8: return 56
        case .int16: return 48
        case .int32: return 32
        default: return 0
        }
    }

    /// Runs `body` with closures made on this thread converting their arguments by Swift type, as an
    /// optimized build does: for tests that compare both forms in one process.
    static func withoutOpaqueCalls<T>(_ body: () throws -> T) rethrows -> T {
        TrampolineShim.opaqueCallsSuppressedHere = true
        defer { TrampolineShim.opaqueCallsSuppressedHere = false }
        return try body()
    }

}
