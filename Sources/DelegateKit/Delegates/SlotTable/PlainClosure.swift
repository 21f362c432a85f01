/// The closure of a plain implementation: what its slot's stub and its plans call. The delegate drops it
/// when the implementation is removed and no call runs it, which releases the user's closure.
final class PlainClosure: Sendable {
    let body: CallThunk.ArrayBody
    /// The call in register form, for a slot whose signature takes registers (see ``RegisterPath``).
    let registers: RegisterBody
    /// The thunk's handler in C, where it has one; else ``entry`` runs ``body``.
    private let handler: CallThunk.Handler?

    init(_ thunk: CallThunk) {
        body = thunk.body
        registers = thunk.registerForm()
        handler = thunk.handler
    }

    /// What a published ``SlotStub`` entered by libffi's array runs, and its user data: the thunk's handler
    /// in C, or ``entry`` with this object, unretained (valid while this object lives).
    var libffiHandler: (function: LibffiShim.Handler, userData: UnsafeMutableRawPointer) {
        handler.map { ($0.function, $0.userData) } ?? (PlainClosure.entry, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The handler that runs ``body``, with a `PlainClosure` (unretained) as user data.
    static let entry: LibffiShim.Handler = { _, result, arguments, userData in
        Unmanaged<PlainClosure>.fromOpaque(userData.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            $0.body(result.unsafelyUnwrapped, arguments ?? noArguments)
        }
    }

    /// Runs the register form (present whenever the call entered in register form).
    @inline(__always)
    func call(_ r: ArgumentRegisters) -> RegisterResult {
        registers.call(
            r.integers.0, r.integers.1, r.integers.2, r.integers.3, r.integers.4,
            r.sse.0, r.sse.1, r.sse.2, r.sse.3, r.sse.4, r.sse.5, r.sse.6, r.sse.7)
    }
}
