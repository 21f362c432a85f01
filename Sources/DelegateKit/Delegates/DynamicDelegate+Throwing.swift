extension DynamicDelegate {
    /// Implements `method` with a closure that may leave the call by throwing a ``CallbackExit``: by a
    /// jump to a ``JumpTarget``, or by a C function that never returns (`png_error`, `lua_error`).
    ///
    /// Swift unwinds the closure first, releasing what it holds, and the slot's entry leaves once the call
    /// has returned to it; see ``CallbackExit``. Layers added by `override` above the
    /// implementation, and observers after it, still run to their end, and receive a zero result from it.
    /// Any other error stops the program with a message naming the error: Swift errors cannot unwind
    /// through C, and nothing but the closure knows what C should receive instead. Catch them in the
    /// closure and return that value (cffi's `onerror`):
    ///
    /// ```swift
    /// try d.implement("read") { (cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
    ///     do { return try source.read(into: buffer, count: n) } catch { log(error); return -1 }
    /// }
    /// ```
    ///
    /// Calls of the slot's other implementations pay nothing for being able to leave.
    /// The closure returns a ``CValue`` type, or nothing for a `void` method.
    @inlinable @discardableResult
    public func implement<each A: CValue, R>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (repeat each A) throws -> R
    ) throws -> Registration {
        try push(method, key: key, once: once, .plain(CallThunk.typed(anyResult: { (argument: repeat each A) -> R in
            do {
                return try body(repeat each argument)
            } catch {
                return CallbackExit.record(error, returning: R.self)
            }
        })))
    }
}
