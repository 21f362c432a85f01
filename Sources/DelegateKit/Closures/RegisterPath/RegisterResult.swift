/// The result registers of a call in register form: `rax` and `xmm0`.
@frozen @usableFromInline
struct RegisterResult {
    @usableFromInline var integer: UInt64
    @usableFromInline var sse: Double

    /// Transparent, so that a debug build makes no call of it either.
    @usableFromInline @_transparent
    init(integer: UInt64, sse: Double) {
        self.integer = integer
        self.sse = sse
    }

    @inlinable static var zero: RegisterResult { RegisterResult(integer: 0, sse: 0) }
}
