/// A short list whose first element is held inline: nearly every change is of one slot, and an array
/// for it was an allocation per change.
struct FirstInline<Element>: Sequence {
    private var first: Element?
    private var more: [Element] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ element: Element) {
        if first == nil { first = element } else { more.append(element) }
    }

    func makeIterator() -> Iterator { Iterator(list: self) }

    struct Iterator: IteratorProtocol {
        let list: FirstInline
        var position = -1

        mutating func next() -> Element? {
            defer { position += 1 }
            if position < 0 { return list.first }
            return position < list.more.count ? list.more[position] : nil
        }
    }
}

extension FirstInline where Element: Equatable {
    func contains(_ element: Element) -> Bool { first == element || more.contains(element) }
}
