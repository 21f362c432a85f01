import CDelegateKitTrampolines

/// The code C calls (`Sources/CDelegateKitTrampolines/`): slots of DelegateKit's trampoline table, each
/// entering an entry with a context in a register, mapped read+execute from this binary beside their
/// data; and a direct call of C in registers. What the register path is, and when a closure takes it, is
/// ``RegisterPath``; libffi's closures take slots of their own through ``LibffiShim``.
///
/// This file and `DirectEntry.swift` (`#CClosure`'s public hooks, whose signatures name these C types)
/// are the only Swift files that import `CDelegateKitTrampolines` (`Scripts/check-layout.py` holds every
/// other file to that).
@usableFromInline
enum TrampolineShim {
    /// The two result registers of a register entry (`rax` and `xmm0`; on aarch64 `x0` and `x1`, which a
    /// floating slot's adapter moves to `d0`): a C struct, because a C-callable Swift function can return
    /// two registers only as one.
    @usableFromInline typealias Registers = cffi_registers
    /// A register entry: `(i0, i1, i2, i3, i4, context, d0, …, d7) -> Registers`, the argument
    /// registers in place and the slot's context in the sixth integer register.
    @usableFromInline typealias Entry = cffi_register_entry

    /// Whether the register path runs in this process (decided once; see ``RegisterPath/isAvailable``).
    static var isAvailable: Bool { cffi_register_path_available() != 0 }

    /// Whether closures made on this thread enter through libffi for now (``RegisterPath/withLibffiEntry(_:)``).
    static var isSuppressedHere: Bool {
        get { cffi_register_path_suppressed() != 0 }
        set { cffi_register_path_suppress(newValue ? 1 : 0) }
    }

    /// A slot entering `entry` with `context` in the register the register path's entries take it in, for
    /// a signature whose result is floating point or not (AAPCS64 wants the former in d0, which the
    /// slot's adapter sees to); nil when no slot can be had. Returns the slot's handle, and the code's
    /// address in `code`.
    static func makeSlot(
        _ entry: Entry, floatingResult: Bool, context: UnsafeMutableRawPointer?, code: inout UnsafeMutableRawPointer?
    ) -> UnsafeMutableRawPointer? {
        let kind = floatingResult ? CFFI_TRAMPOLINE_FLOATING_RESULT : CFFI_TRAMPOLINE_REGISTERS
        return cffi_trampoline_create(Int32(kind), unsafeBitCast(entry, to: UnsafeRawPointer.self), context, &code)
    }

    /// Changes the context a slot passes, before C can call it.
    static func setContext(_ handle: UnsafeMutableRawPointer, _ context: UnsafeMutableRawPointer?) {
        cffi_trampoline_set_context(handle, context)
    }

    /// Points a slot whose owner is gone at an entry that prints `message` and stops the process;
    /// `message` must outlive the slot.
    static func bury(_ handle: UnsafeMutableRawPointer, message: UnsafePointer<CChar>) {
        cffi_trampoline_bury(handle, message)
    }

    /// Hands a slot back; C must not call its code any more.
    static func free(_ handle: UnsafeMutableRawPointer) {
        cffi_trampoline_free(handle)
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
