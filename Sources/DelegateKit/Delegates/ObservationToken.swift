/// Keeps an observation alive: ``cancel()`` ends it, and so does deinitializing the token.
public final class ObservationToken: Sendable {
    /// Emptied by ``cancel()``, so that a kept token does not keep the observer's closure.
    private let observers: Locked<[Observer]>

    init(_ observers: [Observer]) { self.observers = Locked(observers) }

    deinit { cancel() }

    /// Stops the observation, at once: no call made after this returns notifies the observer; one already
    /// running finishes. Neither the token nor the delegate keeps the observer's closure afterwards; it is
    /// released as soon as no call runs it (``DynamicDelegate/waitForRemovedCalls(timeout:)`` waits for that).
    public func cancel() {
        let observers = self.observers.withLock { observers in
            defer { observers = [] }
            return observers
        }
        for observer in observers { observer.cancel() }
    }

    /// Whether ``cancel()`` was called, the token went away, or the observation's owner was deinitialized.
    public var isCancelled: Bool { observers.withLock { $0.allSatisfy(\.isCancelled) } }

    /// Lets go of the observation without ending it, and returns what ends it: for an owner that must not
    /// keep the observers alive (a stream, which the observers feed: holding them would make a cycle that
    /// outlives the delegate). The delegate alone keeps them from then on.
    @usableFromInline
    func handOver() -> @Sendable () -> Void {
        struct WeakObserver: @unchecked Sendable {  // A weak reference loads safely from any thread.
            weak var observer: Observer?
        }
        let observers = self.observers.withLock { observers in
            defer { observers = [] }
            return observers.map { WeakObserver(observer: $0) }
        }
        return {
            for weak in observers { weak.observer?.cancel() }
        }
    }
}
