extension DynamicDelegate {
    /// The calls of `method` as an `AsyncStream`: RxCocoa's `methodInvoked`, one element per call.
    ///
    /// ```swift
    /// for await name in try delegate.calls(of: "startElement") { (_: UnsafeMutableRawPointer?, name: UnsafePointer<CChar>?) in
    ///     String(cString: name!)
    /// } {
    ///     print("element", name)
    /// }
    /// ```
    ///
    /// An observer (`observe(_:_:owner:_:)`, with the same `timing` and rules) yields what `transform`
    /// makes of each call's arguments, on C's thread, during the call: read pointer arguments there. The
    /// observation is cancelled when the stream ends: when the task iterating it is cancelled, or when the
    /// stream is released (with its iterator, at the end of a `for await` loop over the call's result, as
    /// above). The stream does not keep the delegate alive: it finishes when the delegate is deinitialized.
    ///
    /// - Parameters:
    ///   - method: The method whose calls the stream yields.
    ///   - timing: Whether an element is made before or after the slot's implementation runs.
    ///   - bufferingPolicy: How many calls the stream keeps for a reader that lags behind.
    ///   - transform: Makes an element of a call's arguments.
    /// - Throws: As `observe(_:_:owner:_:)` when the argument types are not the method's.
    @inlinable
    public func calls<each A: CValue, Element: Sendable>(
        of method: String, timing: ObservationTiming = .after,
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded,
        _ transform: @escaping @Sendable (repeat each A) -> Element
    ) throws -> AsyncStream<Element> {
        let (stream, continuation, body) = CallStreamFeed.make(bufferingPolicy: bufferingPolicy, transform)
        // The delegate keeps the observer, which keeps what feeds the stream: when the delegate goes, the
        // stream finishes; when the stream ends first, it cancels the observation.
        let cancel = try observe(method, timing, body).handOver()
        continuation.onTermination = { _ in cancel() }
        return stream
    }
}
