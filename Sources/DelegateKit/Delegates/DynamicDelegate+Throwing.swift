extension DynamicDelegate {
    /// Implements `method` with a closure that may throw. Swift errors cannot unwind through C, so a
    /// thrown error is caught: `errorHandler` hears it with the method's name, and C receives `fallback`
    /// (cffi's `onerror`).
    ///
    /// ```swift
    /// try d.implement("read", returningOnError: -1, errorHandler: { error, method in log(error) }) { … throws -> Int in … }
    /// ```
    @inlinable @discardableResult
    public func implement<each A: CValue, R: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, returningOnError fallback: R,
        errorHandler: @escaping @Sendable (any Error, String) -> Void,
        _ body: @escaping @Sendable (repeat each A) throws -> R
    ) throws -> Registration where R: Sendable {
        try push(method, key: key, once: false, .plain(CallThunk.typed { (argument: repeat each A) -> R in
            do {
                return try body(repeat each argument)
            } catch {
                errorHandler(error, method)
                return fallback
            }
        }))
    }

    /// Implements a `void` method with a closure that may throw; a thrown error goes to `errorHandler`.
    @inlinable @discardableResult
    public func implement<each A: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil,
        errorHandler: @escaping @Sendable (any Error, String) -> Void,
        _ body: @escaping @Sendable (repeat each A) throws -> Void
    ) throws -> Registration {
        try push(method, key: key, once: false, .plain(CallThunk.typed { (argument: repeat each A) in
            do {
                try body(repeat each argument)
            } catch {
                errorHandler(error, method)
            }
        }))
    }
}
