/// A short list whose first element is held inline: nearly every change is of one slot, and an array
/// for it was an allocation per change.
///
/// Walked with its own ``forEach(_:)`` and counted in a plain `Int`, not through an iterator and
/// optionals: a debug build runs this type's code unspecialized, and there an iterator (its metadata
/// looked up, the list copied, an optional tested through its value witnesses at every step) cost some
/// 14,000 instructions a slot implemented.
struct FirstInline<Element> {
    private var first: Element?
    private var more: [Element] = []
    private var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        if count == 0 { first = element } else { more.append(element) }
        count += 1
    }

    /// Runs `body` on each element, in the order appended.
    func forEach(_ body: (Element) throws -> Void) rethrows {
        guard count > 0 else { return }
        try body(first.unsafelyUnwrapped)
        guard count > 1 else { return }
        for element in more { try body(element) }
    }
}

extension FirstInline where Element: Equatable {
    func contains(_ element: Element) -> Bool {
        count > 0 && (first.unsafelyUnwrapped == element || (count > 1 && more.contains(element)))
    }
}
