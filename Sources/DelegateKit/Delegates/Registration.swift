/// A handle on one implementation in a slot's stack, returned by `implement` and `override`.
///
/// Discardable: deinitializing it removes nothing. ``remove()`` is the same as
/// ``DynamicDelegate/removeImplementation(for:key:)`` with its method and key.
public final class Registration: Sendable {
    /// The method the implementation fills.
    let method: String
    /// The key it was registered under (the slot's default key for `implement` without one).
    let key: SlotKey
    private weak let slots: SlotTable?

    init(slots: SlotTable, method: String, key: SlotKey) {
        self.slots = slots
        self.method = method
        self.key = key
    }

    /// Removes the implementation registered under this method and key, if it is still there.
    public func remove() {
        guard let slots else { return }
        slots.removeImplementation(for: method, matching: key)
    }

    /// Whether an implementation under this method and key is still in the stack.
    public var isActive: Bool {
        slots?.hasImplementation(for: method, matching: key) ?? false
    }
}
