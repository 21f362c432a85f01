/// A slot's stack of implementations, bottom to top, its first one held inline: nearly every slot has
/// one implementation, and an array of it was an allocation per implemented slot.
struct ImplementationStack: RandomAccessCollection {
    private var bottom: Implementation?
    /// Everything above ``bottom``; empty whenever `bottom` is nil.
    private var above: [Implementation] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { bottom == nil ? 0 : above.count + 1 }

    subscript(position: Int) -> Implementation {
        position == 0 ? bottom.unsafelyUnwrapped : above[position - 1]
    }

    /// The top entry, what C calls.
    var top: Implementation? { above.last ?? bottom }

    // The walks below are the stack's own, on the stack where it lies: `Sequence`'s and `Collection`'s
    // copy it into an iterator, which counted a reference to the bottom entry and to the array, and
    // released both, on every change of a slot. Mutating though only `remove` changes anything: called
    // on `state.slots[index].entries`, a mutating method reaches the stack through the array's in-place
    // accessor, where a non-mutating one was handed a copy of it.

    mutating func contains(where matches: (Implementation) throws -> Bool) rethrows -> Bool {
        try firstIndex(where: matches) != nil
    }

    mutating func firstIndex(where matches: (Implementation) throws -> Bool) rethrows -> Int? {
        guard let bottom else { return nil }
        if try matches(bottom) { return 0 }
        return try above.firstIndex(where: matches).map { $0 + 1 }
    }

    /// Runs `body` on each entry, bottom to top.
    mutating func forEach(_ body: (Implementation) throws -> Void) rethrows {
        guard let bottom else { return }
        try body(bottom)
        for implementation in above { try body(implementation) }
    }

    /// Takes out the entries `matches` accepts, in one walk, keeping the others in place; returns them
    /// bottom to top. (Filtering and then removing walked the stack twice and copied it twice.)
    mutating func remove(where matches: (Implementation) throws -> Bool) rethrows -> [Implementation] {
        guard let first = try firstIndex(where: matches) else { return [] }
        var removed: [Implementation] = []
        if first == 0 { removed.append(bottom.unsafelyUnwrapped) }
        if !above.isEmpty {
            // Position `p` of the stack is `above[p - 1]`; those below `first` stay without asking again.
            var kept = 0
            for index in above.indices {
                let entry = above[index]
                if try index + 1 == first || (index + 1 > first && matches(entry)) {
                    removed.append(entry)
                } else {
                    above[kept] = entry
                    kept += 1
                }
            }
            above.removeLast(above.count - kept)
        }
        if first == 0 { bottom = above.isEmpty ? nil : above.removeFirst() }
        return removed
    }

    mutating func append(_ implementation: Implementation) {
        if bottom == nil { bottom = implementation } else { above.append(implementation) }
    }
}
