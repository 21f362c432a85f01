/// A handle on one implementation in a slot's stack, returned by `implement` and `override`.
///
/// Discardable: deinitializing it removes nothing. ``remove()`` is the same as
/// ``DynamicDelegate/removeImplementation(for:key:)`` with its method and key.
public final class Registration: Sendable {
    /// The method the implementation fills.
    let method: String
    /// Kept as given rather than as an `AnyHashable`, which is not `Sendable`.
    private let sendableKey: any Hashable & Sendable
    private weak let slots: SlotTable?

    init(slots: SlotTable, method: String, key: any Hashable & Sendable) {
        self.slots = slots
        self.method = method
        sendableKey = key
    }

    /// The key it was registered under (the slot's default key for `implement` without one).
    var key: AnyHashable { AnyHashable(sendableKey) }

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

/// The key `implement` uses when given none, so implementing again replaces (A2DynamicDelegate).
struct DefaultKey: Hashable, Sendable {
    /// Made once: wrapping a value in AnyHashable looks its conformance up at run time, every time.
    nonisolated(unsafe) static let erased = AnyHashable(DefaultKey())  // Immutable, and AnyHashable of a Sendable value.
}

/// A key made for `override` without one, so each call adds a layer (REKit).
struct UniqueKey: Hashable, Sendable {
    let value: Int
}
