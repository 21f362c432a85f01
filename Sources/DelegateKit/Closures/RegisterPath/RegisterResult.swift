/// The result registers of a call in register form: `rax` and `xmm0`.
@frozen @usableFromInline
struct RegisterResult {
    @usableFromInline var integer: UInt64
    @usableFromInline var sse: Double

    @inlinable @inline(__always)
    init(integer: UInt64, sse: Double) {
        self.integer = integer
        self.sse = sse
    }

    @inlinable static var zero: RegisterResult { RegisterResult(integer: 0, sse: 0) }
}
