/// A call in register form: the 5 integer and 8 SSE argument registers a register-only signature's
/// arguments arrive in (in order of their class: the first integer-class argument in `i0`, the first
/// floating-point one in `d0`), and the two result registers. Registers a signature does not use hold
/// whatever the caller left there.
///
/// The function is wrapped in a struct so that an optional one is stored as it is: a function value in a
/// generic payload (as in `Optional<Function>`) is stored in its most general form, and each call then
/// goes through a conversion thunk.
@frozen @usableFromInline
struct RegisterBody: Sendable {
    @usableFromInline let call: @Sendable (
        UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double, Double, Double
    ) -> RegisterResult

    @inlinable
    init(
        _ call: @escaping @Sendable (
            UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double, Double, Double
        ) -> RegisterResult
    ) {
        self.call = call
    }

    /// The function value's two words, its code and its context: what `cffi_enter_register_body` reads to
    /// call it (``TrampolineShim/bodyEntry``), where a ``CClosure`` stores them (see
    /// ``CClosure/registersOffset``). The struct is stored as it is, so the words are the stored
    /// function's own, in its natural form; they stay valid while this body is alive.
    var words: (code: UnsafeRawPointer, context: UnsafeRawPointer?) {
        unsafeBitCast(self, to: (code: UnsafeRawPointer, context: UnsafeRawPointer?).self)
    }

    /// Stands in where a closure has no register form, so that the form is stored without an optional
    /// (loading an optional function copies it, a retain and a release on every call); never called.
    static let unused = RegisterBody { _, _, _, _, _, _, _, _, _, _, _, _, _ in .zero }
}
