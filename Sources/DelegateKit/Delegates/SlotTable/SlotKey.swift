/// The key an implementation is registered under, as a slot compares it: the default key of `implement`
/// without one (so implementing again replaces, as in A2DynamicDelegate), or a key given (by the user, or
/// made by `override` without one).
///
/// The default key is no object at all, and a given key one reference: copying and dropping either is
/// a pointer's work, and comparing keys of one type a call of that type's `==`. An `AnyHashable` (or an
/// optional one) is copied and destroyed through its value witnesses: with the default key as one, each
/// slot a delegate implemented cost about 170 instructions more in a release build, and its
/// implementation and `Registration` 32 bytes more each.
struct SlotKey: Equatable, @unchecked Sendable {  // A given key wraps a `Sendable` value and never changes.
    /// Nil for the default key.
    private let given: Given?

    /// A given key, in an object of its own type (``Typed``), so that two keys of one type compare by
    /// that type's `==`. Keys compared as `AnyHashable`s reached it by unboxing one through a dynamic
    /// cast and a generic metadata lookup, some 1,400 instructions a comparison: two thirds of the work
    /// of implementing under a key and removing it again, where a slot holds a few entries.
    private class Given {
        /// Whether the key equals no key of another type: `override`'s own keys (``Unique``), which no
        /// user's value can be, where a user's key may equal one of another type.
        let isUnique: Bool

        init(isUnique: Bool) { self.isUnique = isUnique }

        /// The key as `AnyHashable` compares it with a key of another type (`1 as Int` equals `1 as
        /// Int8`).
        var anyHashable: AnyHashable { fatalError("DelegateKit: SlotKey.Given is abstract") }

        /// Whether `other`, a key of this object's own class, is equal to this one.
        func isEqual(toSameType other: Given) -> Bool { fatalError("DelegateKit: SlotKey.Given is abstract") }
    }

    private final class Typed<Key: Hashable & Sendable>: Given {
        let key: Key

        init(_ key: Key) {
            self.key = key
            super.init(isUnique: false)
        }

        override var anyHashable: AnyHashable { AnyHashable(key) }

        override func isEqual(toSameType other: Given) -> Bool {
            key == unsafeDowncast(other, to: Typed<Key>.self).key
        }
    }

    /// A ``UniqueKey``: a class of its own, which takes no generic metadata lookup to make.
    private final class Unique: Given {
        let value: Int

        init(_ value: Int) {
            self.value = value
            super.init(isUnique: true)
        }

        override var anyHashable: AnyHashable { AnyHashable(UniqueKey(value: value)) }

        override func isEqual(toSameType other: Given) -> Bool {
            value == unsafeDowncast(other, to: Unique.self).value
        }
    }

    /// The key `implement` uses when given none.
    static let `default` = SlotKey(nil)

    /// `key`, or the default key for nil.
    @inline(__always)
    init(_ key: borrowing (any Hashable & Sendable)?) {
        // Borrowed, and tested without binding: taken as an initializer's argument is taken (owned), the
        // caller's key was copied through the optional's value witnesses and the copy destroyed, even
        // when it held nothing; so did `guard let`.
        given = key == nil ? nil : SlotKey.given(key.unsafelyUnwrapped)
    }

    /// The object of `key`'s own type (the existential opened).
    private static func given<Key: Hashable & Sendable>(_ key: Key) -> Given {
        if Key.self == UniqueKey.self { return Unique(unsafeBitCast(key, to: UniqueKey.self).value) }
        return Typed(key)
    }

    /// Equal as `AnyHashable`s are: by the keys' own `==` where they are of one type, else as
    /// `AnyHashable` compares values of two types.
    static func == (a: SlotKey, b: SlotKey) -> Bool {
        guard let x = a.given, let y = b.given else { return a.given == nil && b.given == nil }
        if x === y { return true }
        if ObjectIdentifier(type(of: x)) == ObjectIdentifier(type(of: y)) { return x.isEqual(toSameType: y) }
        return !x.isUnique && !y.isUnique && x.anyHashable == y.anyHashable
    }
}

/// A key made for `override` without one, so each call adds a layer (REKit).
struct UniqueKey: Hashable, Sendable {
    let value: Int
}
