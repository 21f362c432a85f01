/// A handle on one implementation in a slot's stack, returned by `implement` and `override`.
///
/// Discardable: deinitializing it removes nothing. ``remove()`` is the same as
/// ``DynamicDelegate/removeImplementation(for:key:)`` with its method and key.
public final class Registration: Sendable {
    /// The slot of the method the implementation fills: its index rather than its name, which made every
    /// registration a 48-byte object in a 64-byte malloc chunk (this is 40 bytes in a 48-byte one) and
    /// counted a reference to the name for each one made and freed; nor is a name looked up on removal.
    let slot: Int
    /// The key it was registered under (the slot's default key for `implement` without one).
    let key: SlotKey
    private weak let slots: SlotTable?

    init(slots: SlotTable, slot: Int, key: SlotKey) {
        self.slots = slots
        self.slot = slot
        self.key = key
    }

    /// Removes the implementation registered under this method and key, if it is still there.
    public func remove() {
        guard let slots else { return }
        slots.removeImplementation(at: slot, matching: key)
    }

    /// Whether an implementation under this method and key is still in the stack.
    public var isActive: Bool {
        slots?.hasImplementation(at: slot, matching: key) ?? false
    }
}
