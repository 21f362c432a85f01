/// Starts a C operation that reports its completion through a callback, and suspends until C calls it:
/// the `async` form of a C completion callback (GIO's `GAsyncReadyCallback`, a thread pool's "done").
///
/// ```swift
/// let contents = try await withCCallback(onCancel: { g_cancellable_cancel(cancellable) }) { callback in
///     g_file_load_contents_async(file, cancellable, callback.functionPointer(), nil)
/// } receive: { (source: UnsafeMutablePointer<GObject>?, result: OpaquePointer?, _: gpointer?) in
///     try finishLoading(source, result)  // while the call lasts: GIO frees `result` afterwards
/// }
/// ```
///
/// `start` gets a one-shot callback (see `CCallback.oneShot(_:)`) and hands it to C. When C calls it,
/// `receive` runs on C's thread with the call's arguments, and what it returns (or throws) is what this
/// returns (or throws): arguments that C owns, such as a result object it frees when the callback returns,
/// must be read there. The callback and everything it captured are released as that call returns.
///
/// The caller is resumed exactly once:
/// - when C calls the callback: with `receive`'s result; a second call from C runs nothing;
/// - when making the callback throws (a signature DelegateKit cannot serve): with that error, before
///   `start` runs;
/// - when `start` throws: with that error. Throw only when C did not take the callback (its registration
///   failed): it is released at once, and C must never call it.
///
/// Cancelling the task calls `onCancel` once (at once when the task is cancelled already, possibly while
/// `start` runs): pass what makes the C operation end early, such as `g_cancellable_cancel`. The task
/// still waits for C's call, which reports how the operation ended (GIO calls back with
/// `G_IO_ERROR_CANCELLED`), so that nothing C still uses is released under it. Without `onCancel`,
/// cancellation changes nothing.
///
/// - Important: If C never calls the callback, the task never resumes, and the callback with what it
///   captured stays alive, since C may still call it. Use this only with operations that always complete.
///
/// - Parameters:
///   - isolation: Where `start` runs; the caller's actor, by default.
///   - onCancel: What ends the C operation early when the task is cancelled.
///   - start: Starts the C operation with the callback, synchronously.
///   - receive: Turns the call's arguments into the result, during the call.
/// - Returns: What `receive` returned.
public func withCCallback<each A: CValue, T: Sendable>(
    isolation: isolated (any Actor)? = #isolation,
    onCancel: @escaping @Sendable () -> Void = {},
    _ start: (CCallback) throws -> Void,
    receive: @escaping @Sendable (repeat each A) throws -> T
) async throws -> T {
    try await withTaskCancellationHandler(operation: {
        try await withCheckedThrowingContinuation(isolation: isolation) { (continuation: CheckedContinuation<T, any Error>) in
            let callback: CCallback
            do {
                callback = try CCallback.oneShot { (argument: repeat each A) in
                    continuation.resume(with: Result { try receive(repeat each argument) })
                }
            } catch {
                return continuation.resume(throwing: error)
            }
            do {
                try start(callback)
            } catch {
                // C refused the callback: nothing will call it, so it goes now. (Had C called it already,
                // against the rule, that call resumed the task.)
                if OneShot.discard(callback.address) { continuation.resume(throwing: error) }
            }
        }
    }, onCancel: onCancel, isolation: isolation)
}
