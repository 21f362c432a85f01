/// How a closure that C calls leaves the call without returning to its C caller: by a `longjmp` to a
/// ``JumpTarget``, or by calling a C function that never returns, such as libpng's `png_error` or Lua's
/// `lua_error`.
///
/// Throw one from the closure (``CClosure``'s initializers take closures that throw, and so does
/// ``CClosure/init(signature:_:)-6a2o1``):
///
/// ```swift
/// let reader = try CClosure { (png: png_structp?, data: png_bytep?, length: Int) in
///     guard source.read(into: data, length) else {
///         throw try CallbackExit.call(pngError, png, shortRead)
///     }
/// }
/// ```
///
/// Swift unwinds the closure as for any error: every reference it holds is released and every `defer`
/// runs. The closure then returns to DelegateKit's entry, which leaves the call the way the exit says,
/// from a frame that holds nothing of Swift's. So a closure that leaves this way leaks nothing, captures
/// and all, in debug and release builds alike; one that calls `longjmp` or `png_error` itself skips its
/// own frames, and whatever they hold stays held (see ``JumpTarget``). The jump still skips every frame
/// between the entry and where it lands, so those must be C's: leaving from a closure that another Swift
/// closure's call into C reached skips that outer closure's frames.
///
/// A closure that throws anything else stops the program with a message: C cannot be told of an error,
/// and the closure's result would be made up.
public struct CallbackExit: Error, Sendable {
    /// Records the exit in this thread's request (``CallbackExitShim``).
    private let request: @Sendable () -> Void

    init(request: @escaping @Sendable () -> Void) {
        self.request = request
    }

    /// Asks this thread's entry to take the exit once the closure has returned: a `CClosure`'s entry
    /// takes it itself (``CallbackExitShim/takeRequestedExit()``); a slot's finds it noted on the call's
    /// record as it leaves.
    func ask() {
        request()
        RetirementShim.noteExitRequest()
    }

    /// Records what `error`, thrown by a closure C called, asks for; stops the program unless it is a
    /// ``CallbackExit``. Returns the value C gets should the exit return after all (it never does).
    @usableFromInline
    static func record<R>(_ error: any Error, returning: R.Type) -> R {
        guard let exit = error as? CallbackExit else {
            misuse("a closure C called threw \(String(reflecting: error)); C cannot be told of an error, so a "
                + "closure that C calls may throw only a CallbackExit (to leave the call by a jump or a C function "
                + "that never returns); catch any other error inside the closure and return the value C should receive")
        }
        exit.ask()
        return zeroValue(R.self)
    }
}

/// A value of `T` whose bytes are all zero: what a closure that left by a ``CallbackExit`` returns to
/// DelegateKit's entry, which never hands it to C.
func zeroValue<T>(_ type: T.Type) -> T {
    withUnsafeTemporaryAllocation(byteCount: max(MemoryLayout<T>.size, 1), alignment: MemoryLayout<T>.alignment) {
        $0.initializeMemory(as: UInt8.self, repeating: 0)
        return $0.baseAddress.unsafelyUnwrapped.load(as: T.self)
    }
}
