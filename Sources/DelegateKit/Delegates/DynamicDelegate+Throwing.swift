extension DynamicDelegate {
    /// Implements `method` with a closure that may throw. Swift errors cannot unwind through C, so a
    /// thrown error is caught: `errorHandler` hears it with the method's name, and C receives `fallback`
    /// (cffi's `onerror`). Any ``CValue`` can be the fallback, a pointer too (`NULL` for a `void *`
    /// method): C values are plain bits, so the closure copies it to whichever thread C calls on.
    ///
    /// ```swift
    /// try d.implement("read", returningOnError: -1, errorHandler: { error, method in log(error) }) { … throws -> Int in … }
    /// ```
    @inlinable @discardableResult
    public func implement<each A: CValue, R: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, returningOnError fallback: R,
        errorHandler: @escaping @Sendable (any Error, String) -> Void,
        _ body: @escaping @Sendable (repeat each A) throws -> R
    ) throws -> Registration {
        let fallback = Fallback(fallback)
        return try push(method, key: key, once: false, .plain(CallThunk.typed { (argument: repeat each A) -> R in
            do {
                return try body(repeat each argument)
            } catch {
                errorHandler(error, method)
                return fallback.value
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

/// What a throwing implementation returns on error, shared with the thread C calls on. Sendable because a
/// ``CValue`` is trivial (checked when the closure is made): a copy shares nothing with the original. What
/// a pointer points to is the caller's to share, as with any pointer a closure returns to C.
@usableFromInline
struct Fallback<R: CValue>: @unchecked Sendable {
    @usableFromInline let value: R

    @inlinable
    init(_ value: R) { self.value = value }
}
