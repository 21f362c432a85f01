/// The key an implementation is registered under, as a slot compares it: the default key of `implement`
/// without one (so implementing again replaces, as in A2DynamicDelegate), or a key given (by the user, or
/// made by `override` without one).
///
/// The default key is no object at all, and a given key one reference: copying, comparing and dropping
/// either is a pointer's work. An `AnyHashable` (or an optional one) is copied and destroyed through its
/// value witnesses: with the default key as one, each slot a delegate implemented cost about 170
/// instructions more in a release build, and its implementation and `Registration` 32 bytes more each.
struct SlotKey: Equatable, @unchecked Sendable {  // A given key wraps a `Sendable` value and never changes.
    /// Nil for the default key.
    private let given: Given?

    private final class Given {
        let value: AnyHashable

        init(_ value: AnyHashable) { self.value = value }
    }

    /// The key `implement` uses when given none.
    static let `default` = SlotKey(nil)

    /// `key`, or the default key for nil.
    @inline(__always)
    init(_ key: (any Hashable & Sendable)?) {
        // Tested without binding: `guard let` copied the optional through its value witnesses, and
        // destroyed the copy, even when it held nothing.
        given = key == nil ? nil : Given(AnyHashable(key.unsafelyUnwrapped))
    }

    static func == (a: SlotKey, b: SlotKey) -> Bool {
        guard let x = a.given, let y = b.given else { return a.given == nil && b.given == nil }
        return x === y || x.value == y.value
    }
}

/// A key made for `override` without one, so each call adds a layer (REKit).
struct UniqueKey: Hashable, Sendable {
    let value: Int
}
