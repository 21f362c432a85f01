/// A handle on one implementation in a slot's stack, returned by `implement` and `override`.
///
/// Discardable: deinitializing it removes nothing. ``remove()`` is the same as
/// ``DynamicDelegate/removeImplementation(for:key:)`` with its method and key.
public final class Registration: @unchecked Sendable {  // `delegate` is set once; weak loads are thread-safe.
    /// The method the implementation fills.
    public let method: String
    /// The key it was registered under (the slot's default key for `implement` without one).
    public let key: AnyHashable
    private weak var delegate: DynamicDelegate?

    init(delegate: DynamicDelegate, method: String, key: AnyHashable) {
        self.delegate = delegate
        self.method = method
        self.key = key
    }

    /// Removes the implementation registered under this method and key, if it is still there.
    public func remove() {
        guard let delegate else { return }
        delegate.removeImplementation(for: method, matching: key)
    }

    /// Whether an implementation under this method and key is still in the stack.
    public var isActive: Bool {
        delegate?.hasImplementation(for: method, matching: key) ?? false
    }
}
