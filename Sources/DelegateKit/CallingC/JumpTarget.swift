import Glibc
import Synchronization

/// A place a callback may `longjmp` back to: the `setjmp` site Swift cannot write.
///
/// Some C libraries require an error callback never to return: libjpeg's `error_exit`, libpng's
/// `png_error`, Lua's `lua_error`. Their C users call the library at a `setjmp` site and `longjmp` back to
/// it from the callback. Swift cannot call `setjmp`, so DelegateKit holds the site: call the library's
/// function through ``CFunction/call(catchingJumpsTo:_:returning:)->JumpOutcome<R>`` with a target, and let the callback
/// (a ``CClosure``, or a slot of a ``DynamicDelegate``) call ``jump(_:)``. The call then returns
/// ``JumpOutcome/jumped(_:)`` instead of the function's result.
///
/// A ``CClosure`` does better to throw ``CallbackExit/jump(to:value:)``: the closure unwinds as for any
/// error, and DelegateKit's entry jumps once it has returned, so the jump skips no Swift frame and
/// nothing the closure captured or made leaks. What follows is for closures that jump themselves (a
/// slot's, for now).
///
/// ```swift
/// let target = JumpTarget()
/// decoder.pointee.client_data = UnsafeMutableRawPointer(target.buffer)   // libjpeg's context pointer
/// let errors = TypedDelegate(for: jpeg_error_mgr.self, wrapping: jpeg_std_error(&standard))
/// try errors.implement(\.error_exit) { (info: j_common_ptr?) in
///     // Never returns: libjpeg must not go on. Captures nothing (see below).
///     longjmp(info!.pointee.client_data!.assumingMemoryBound(to: __jmp_buf_tag.self), 1)
/// }
/// switch try readHeader.call(catchingJumpsTo: target, decoder, Int32(1), returning: Int32.self) {
/// case .returned(let status): …
/// case .jumped: …                        // the JPEG was bad; the decoder must be destroyed
/// }
/// ```
///
/// ## What a jump skips
/// Only the frames between the C function and the callback's `jump()`: C code of the library, which
/// libraries that longjmp are written for, DelegateKit's entry of the callback, whose record of the call
/// is forgotten when the jump lands, and the callback's own Swift code. That Swift code must hold nothing
/// that needs cleaning up when it jumps: a reference it retained is never released (the object leaks), a
/// `defer` block or `withExtendedLifetime` end does not run, a lock it holds stays held, and an `inout`
/// access in progress (`withUnsafeMutablePointer(to: &x)`, a `mutating` method) leaves Swift's per-thread
/// record of exclusive accesses pointing into the dead frame, which later traps or corrupts memory. So jump
/// first thing, or after everything is let go; never from inside a `with…` block, an observer or a
/// ``withCallbackScope(_:)``. In debug builds Swift keeps every reference a closure uses until the closure
/// returns (and DelegateKit's generated thunks, compiled in your module, keep the closure itself), so there
/// a jumping closure that touches anything it captured (``jump(_:)`` on a captured target included) leaks
/// it, and stays alive after its removal: reach what it needs through the library's context pointer, as
/// above. The caller's frames are not skipped: the jump lands inside
/// ``CFunction/call(catchingJumpsTo:_:returning:)->JumpOutcome<R>``, which returns normally.
///
/// A target serves one call at a time, on the thread making it; jumping to it at any other time stops
/// the program with a message, as the C behavior would be undefined.
public final class JumpTarget: @unchecked Sendable {  // The buffer is touched only by the armed call's thread.
    /// The `jmp_buf` the calls catching jumps here set: for C code of your own that calls `longjmp`
    /// itself, while a call armed it.
    public let buffer: UnsafeMutablePointer<__jmp_buf_tag>
    /// The thread whose call armed the target (`pthread_self()`), or 0.
    private let armedBy = Atomic<UInt>(0)

    /// A target no call has armed yet.
    public init() {
        buffer = .allocate(capacity: 1)
        buffer.initialize(to: __jmp_buf_tag())
    }

    deinit {
        buffer.deallocate()
    }

    /// Whether a call catching jumps here runs on the calling thread now, so that ``jump(_:)`` may be called.
    public var isArmed: Bool { armedBy.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Jumps back to the call catching jumps here, which returns ``JumpOutcome/jumped(_:)`` with `value`
    /// (1 when `value` is 0, as `longjmp` does). See ``JumpTarget`` for what the jump skips.
    ///
    /// Stops the program with a message when no such call runs on this thread.
    public func jump(_ value: Int32 = 1) -> Never {
        require(isArmed, "JumpTarget.jump(_:) was called with no call catching jumps to it running on this thread: "
            + "jump only from inside CFunction.call(catchingJumpsTo:…), on its thread")
        longjmp(buffer, value)
    }

    /// Runs `body` with the target armed on this thread; throws when it is armed already.
    func arm<R>(for function: String, _ body: () -> R) throws -> R {
        let me = UInt(pthread_self())
        guard armedBy.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing).exchanged else {
            throw DelegateError.jumpTargetInUse(function: function)
        }
        defer { armedBy.store(0, ordering: .releasing) }
        return body()
    }
}

/// How a call catching jumps ended (``CFunction/call(catchingJumpsTo:_:returning:)->JumpOutcome<R>``).
public enum JumpOutcome<Value> {
    /// The function returned this result.
    case returned(Value)
    /// A callback jumped back (``JumpTarget/jump(_:)``) with this value; the function did not finish.
    case jumped(Int32)
}

extension JumpOutcome: Sendable where Value: Sendable {}
extension JumpOutcome: Equatable where Value: Equatable {}

extension CFunction {
    /// Calls the function as `call(_:returning:)` does, at a `setjmp` site: while it runs, a callback may
    /// leave it with `target.jump()`, and then this returns ``JumpOutcome/jumped(_:)``.
    ///
    /// Always through libffi's `ffi_call`. Throws like `call(_:returning:)` when the arguments do not fit,
    /// ``DelegateError/jumpTargetInUse(function:)`` when another call armed `target` and is still running,
    /// and ``DelegateError/callMismatch(function:declaration:call:reason:)`` for a variadic function.
    public func call<each A: CValue, R: CValue>(
        catchingJumpsTo target: JumpTarget, _ argument: repeat each A, returning: R.Type = R.self
    ) throws -> JumpOutcome<R> {
        try performCatching(target, repeat each argument, returning: R.self, checkingResult: true)
    }

    /// Calls the function, ignoring what it returns, at a `setjmp` site (see
    /// ``call(catchingJumpsTo:_:returning:)->JumpOutcome<R>``).
    public func call<each A: CValue>(catchingJumpsTo target: JumpTarget, _ argument: repeat each A) throws -> JumpOutcome<Void> {
        switch try performCatching(target, repeat each argument, returning: CVoid.self, checkingResult: false) {
        case .returned: return .returned(())
        case .jumped(let value): return .jumped(value)
        }
    }

    private func performCatching<each A: CValue, R: CValue>(
        _ target: JumpTarget, _ argument: repeat each A, returning: R.Type, checkingResult: Bool
    ) throws -> JumpOutcome<R> {
        guard let prepared, !isVariadic else {
            var types: [CType] = []
            for value in repeat each argument { types.append(staticType(of: value).cType) }
            throw DelegateError.callMismatch(
                function: name, declaration: declaration, call: CSignature(R.cType, types),
                reason: "a variadic function cannot be called catching jumps")
        }
        try check(repeat each argument, returning: R.self, checkingResult: checkingResult)
        var jumped: Int32 = 0
        // Every DelegateKit call that starts inside the function and is left by a jump back is forgotten:
        // the frames the jump skipped run no cleanup.
        let depth = RetirementShim.callsInProgressHere
        let result = try target.arm(for: name) {
            withArgumentArray(repeat each argument) { arguments in
                withResultBuffer(prepared, returning: R.self) { result in
                    jumped = CallbackExitShim.callCatchingJump(to: target.buffer, prepared.cif, address, result, arguments)
                }
            }
        }
        if jumped != 0 { RetirementShim.forgetCalls(from: depth) }
        return jumped == 0 ? .returned(result) : .jumped(jumped)
    }
}
