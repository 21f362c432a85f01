extension DynamicDelegate {
    /// Implements `method` with a closure that may leave the call by throwing a ``CallbackExit``: by a
    /// jump to a ``JumpTarget``, or by a C function that never returns (`png_error`, `lua_error`).
    ///
    /// Swift unwinds the closure first, releasing what it holds, and the slot's entry leaves once the call
    /// has returned to it; see ``CallbackExit``. Layers added by `override` above the
    /// implementation, and observers after it, still run to their end, and receive a zero result from it.
    /// Any other error stops the program with a message; to hear other errors, take
    /// ``implement(_:key:returningOnError:errorHandler:_:)-(_,_,_,_,(A)->R)``.
    ///
    /// Calls of the slot's other implementations pay nothing for being able to leave.
    @inlinable @discardableResult
    public func implement<each A: CValue, R: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (repeat each A) throws -> R
    ) throws -> Registration {
        try push(method, key: key, once: once, .plain(CallThunk.typed { (argument: repeat each A) -> R in
            do {
                return try body(repeat each argument)
            } catch {
                return CallbackExit.record(error, returning: R.self)
            }
        }))
    }

    /// Implements a method that returns `void` with a closure that may leave the call by throwing a
    /// ``CallbackExit``.
    @inlinable @discardableResult
    public func implement<each A: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (repeat each A) throws -> Void
    ) throws -> Registration {
        try push(method, key: key, once: once, .plain(CallThunk.typed { (argument: repeat each A) in
            do {
                try body(repeat each argument)
            } catch {
                CallbackExit.record(error, returning: Void.self)
            }
        }))
    }

    /// Implements `method` with a closure that may throw. Swift errors cannot unwind through C, so a
    /// thrown error is caught: `errorHandler` hears it with the method's name, and C receives `fallback`
    /// (cffi's `onerror`). Any ``CValue`` can be the fallback, a pointer too (`NULL` for a `void *`
    /// method): C values are plain bits, so the closure copies it to whichever thread C calls on.
    /// A ``CallbackExit`` is not an error to report: the call leaves the way it says.
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
                CallbackExit.recordOrReport(error, of: method, to: errorHandler)
                return fallback.value
            }
        }))
    }

    /// Implements a `void` method with a closure that may throw; a thrown error goes to `errorHandler`, and a
    /// ``CallbackExit`` leaves the call.
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
                CallbackExit.recordOrReport(error, of: method, to: errorHandler)
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

extension CallbackExit {
    /// What an implementation with an error handler does with what its closure threw: a ``CallbackExit``
    /// is recorded, for the slot's entry to leave by once the closure has returned (the value it returns
    /// then never reaches C); any other error goes to the handler, with the method's name.
    @usableFromInline
    static func recordOrReport(_ error: any Error, of method: String, to handler: (any Error, String) -> Void) {
        if let exit = error as? CallbackExit {
            exit.ask()
        } else {
            handler(error, method)
        }
    }
}
