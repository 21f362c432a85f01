/// The register path: how C enters a closure of a *register-only* signature without libffi.
///
/// On x86_64 System V and AAPCS64 (Linux), a signature whose arguments are at most 5 of integer class
/// (integers up to 64 bits, `bool`, pointers) and at most 8 floating-point (`float`, `double`), returning
/// `void`, one of those or a pointer, travels entirely in registers. Its C address is then a slot of
/// DelegateKit's trampoline table (see `cffi_trampoline_create`) that loads a context pointer into `r9`
/// (`x5`), the sixth integer argument register, which such a signature leaves free, and jumps to one of
/// DelegateKit's entries. The entry hands the registers to a ``RegisterBody``, the user's closure behind a
/// conversion specialized for its Swift types when it was made, or is the closure's own (see
/// ``_DirectEntry``). libffi's generic entry, which classifies and copies every argument of every call, is
/// not involved.
///
/// Everything else (and every closure when the path is off, see ``isAvailable``) enters through libffi.
@usableFromInline
enum RegisterPath {
    /// Whether closures of register-only signatures take this path: on x86_64 and aarch64 Linux, unless
    /// the environment sets `DELEGATEKIT_FAST_PATH=0`, wherever DelegateKit's trampoline table can be
    /// mapped (whatever libffi was built with, and under `PR_SET_MDWE` too).
    @usableFromInline static let isAvailable: Bool = TrampolineShim.isAvailable

    /// Whether a closure made now on this thread gets a register trampoline for `prepared`.
    static func entersInRegisters(_ prepared: PreparedSignature) -> Bool {
        prepared.takesRegisters && !TrampolineShim.isSuppressedHere
    }

    /// Runs `body` with closures, stubs and dispatchers made on this thread entering through libffi, as
    /// with `DELEGATEKIT_FAST_PATH=0`: for tests that compare both paths in one process. (Register
    /// forms are still made, and a `Next` still calls an original function directly.)
    static func withLibffiEntry<T>(_ body: () throws -> T) rethrows -> T {
        TrampolineShim.isSuppressedHere = true
        defer { TrampolineShim.isSuppressedHere = false }
        return try body()
    }
}
