/// What feeds a stream of C calls (``CClosure/makeStream(of:bufferingPolicy:_:)``,
/// ``DynamicDelegate/calls(of:timing:bufferingPolicy:_:)``): held by the closure that yields, so that the
/// stream finishes when that closure is released (C is done with it, or the delegate went away) instead
/// of leaving its reader waiting forever.
@usableFromInline
final class CallStreamFeed<Element: Sendable>: Sendable {
    @usableFromInline let continuation: AsyncStream<Element>.Continuation

    @usableFromInline
    init(_ continuation: AsyncStream<Element>.Continuation) { self.continuation = continuation }

    deinit { continuation.finish() }

    /// A stream and the closure body that feeds it, one element per call, made by `transform` during the
    /// call (pointer arguments are valid only then).
    @inlinable
    static func make<each A: CValue>(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
        _ transform: @escaping @Sendable (repeat each A) -> Element
    ) -> (stream: AsyncStream<Element>, continuation: AsyncStream<Element>.Continuation, body: @Sendable (repeat each A) -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let feed = CallStreamFeed(continuation)
        return (stream, continuation, { (argument: repeat each A) in
            _ = feed.continuation.yield(transform(repeat each argument))
        })
    }
}

extension CClosure {
    /// A C function pointer returning `void` whose calls come out of an `AsyncStream`: for a C progress or
    /// event callback.
    ///
    /// ```swift
    /// let (progress, closure) = try CClosure.makeStream { (done: Int64, total: Int64, _: UnsafeMutableRawPointer?) in
    ///     Double(done) / Double(total)
    /// }
    /// start_download(url, closure.functionPointer(), nil)
    /// for await fraction in progress { print(fraction) }
    /// ```
    ///
    /// Each call yields what `transform` makes of its arguments, on C's thread, during the call: read
    /// pointer arguments there, since they are valid only then. The stream buffers as `bufferingPolicy`
    /// says, and finishes when the closure is deinitialized. Once the stream has ended (its task was
    /// cancelled, or the stream and its iterator were released), later calls yield nothing; the closure
    /// still serves C until you release it.
    ///
    /// - Parameters:
    ///   - elementType: The type of the stream's elements.
    ///   - bufferingPolicy: How many calls the stream keeps for a reader that lags behind.
    ///   - transform: Makes an element of a call's arguments.
    /// - Returns: The stream, and the closure to hand to C: keep it alive as long as C may call it.
    @inlinable
    public static func makeStream<each A: CValue, Element: Sendable>(
        of elementType: Element.Type = Element.self,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded,
        _ transform: @escaping @Sendable (repeat each A) -> Element
    ) throws -> (stream: AsyncStream<Element>, closure: CClosure) {
        let (stream, _, body) = CallStreamFeed.make(bufferingPolicy: bufferingPolicy, transform)
        return (stream, try CClosure(body))
    }
}

extension NotifiedCallback {
    /// A callback returning `void` whose calls come out of an `AsyncStream`, released by C's destroy
    /// notification: for a GLib signal handler connected with `g_signal_connect_data`, say. The stream
    /// finishes when C releases the callback (the handler is disconnected, the object finalized).
    ///
    /// Elements are made as ``CClosure/makeStream(of:bufferingPolicy:_:)`` makes them, during each call.
    @inlinable
    public static func makeStream<each A: CValue, Element: Sendable>(
        of elementType: Element.Type = Element.self,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded,
        _ transform: @escaping @Sendable (repeat each A) -> Element
    ) throws -> (stream: AsyncStream<Element>, callback: NotifiedCallback) {
        let (stream, _, body) = CallStreamFeed.make(bufferingPolicy: bufferingPolicy, transform)
        return (stream, try NotifiedCallback(body))
    }
}
