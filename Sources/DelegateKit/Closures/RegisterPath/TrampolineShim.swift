import CDelegateKitTrampolines

/// The register path's C half (`Sources/CDelegateKitTrampolines/`): the trampoline that enters a Swift
/// entry with a context in a free register, written into libffi's closure memory or into pages of its
/// own, the probe that proves it runs, and a direct call of C in registers. What the path is, and when a
/// closure takes it, is ``RegisterPath``.
///
/// This file and `DirectEntry.swift` (`#CClosure`'s public hooks, whose signatures name these C types)
/// are the only Swift files that import `CDelegateKitTrampolines` (`Scripts/check-layout.py` holds every
/// other file to that).
@usableFromInline
enum TrampolineShim {
    /// The two result registers of a register entry (`rax` and `xmm0`): a C struct, because a C-callable
    /// Swift function can return two registers only as one.
    @usableFromInline typealias Registers = cffi_registers
    /// A register entry: `(i0, i1, i2, i3, i4, context, d0, …, d7) -> Registers`, the argument
    /// registers in place and the trampoline's context in the sixth integer register.
    @usableFromInline typealias Entry = cffi_register_entry

    /// Whether the register path runs in this process (probed once; see ``RegisterPath/isAvailable``).
    static var isAvailable: Bool { cffi_register_path_available() != 0 }

    /// Whether closures made on this thread enter through libffi for now (``RegisterPath/withLibffiEntry(_:)``).
    static var isSuppressedHere: Bool {
        get { cffi_register_path_suppressed() != 0 }
        set { cffi_register_path_suppress(newValue ? 1 : 0) }
    }

    /// A trampoline entering `entry` with `context`, in a page of DelegateKit's own where one can be made
    /// (then a near jump); nil otherwise. Returns the slot's handle, and the code's address in `code`.
    static func makeInPage(
        _ entry: Entry, context: UnsafeMutableRawPointer?, code: inout UnsafeMutableRawPointer?
    ) -> UnsafeMutableRawPointer? {
        cffi_trampoline_create(entry, context, &code)
    }

    /// Changes the context a page's trampoline passes, before C can call it.
    static func setPageContext(_ handle: UnsafeMutableRawPointer, _ context: UnsafeMutableRawPointer?) {
        cffi_trampoline_set_context(handle, context)
    }

    /// Hands a page's slot back; C must not call its code any more.
    static func freeInPage(_ handle: UnsafeMutableRawPointer) {
        cffi_trampoline_free(handle)
    }

    /// A trampoline entering `entry` with `context` in libffi's closure memory (an indirect jump), to
    /// free as a libffi closure; nil when the path is off or suppressed here, or memory is refused.
    static func makeInClosureMemory(
        _ entry: Entry, context: UnsafeMutableRawPointer?, code: inout UnsafeMutableRawPointer?
    ) -> UnsafeMutableRawPointer? {
        cffi_register_closure_create(entry, context, &code)
    }

    /// Calls `function`, of a register-only signature, with these argument registers: a direct call.
    @usableFromInline @_transparent
    static func call(
        _ function: UnsafeRawPointer, _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double,
        _ d7: Double
    ) -> RegisterResult {
        RegisterResult(cffi_call_registers(function, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7))
    }
}

extension RegisterResult {
    /// These registers as an entry returns them to C.
    @inlinable @inline(__always)
    var registers: TrampolineShim.Registers { cffi_registers(integer: integer, sse: sse) }

    /// The registers a C function returned.
    @inlinable @inline(__always)
    init(_ registers: TrampolineShim.Registers) { self.init(integer: registers.integer, sse: registers.sse) }
}
