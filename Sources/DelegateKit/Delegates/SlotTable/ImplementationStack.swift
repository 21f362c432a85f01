/// A slot's stack of implementations, bottom to top, its first one held inline: nearly every slot has
/// one implementation, and an array of it was an allocation per implemented slot.
struct ImplementationStack: RandomAccessCollection, RangeReplaceableCollection {
    private var bottom: Implementation?
    /// Everything above ``bottom``; empty whenever `bottom` is nil.
    private var above: [Implementation] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { bottom == nil ? 0 : above.count + 1 }

    subscript(position: Int) -> Implementation {
        position == 0 ? bottom.unsafelyUnwrapped : above[position - 1]
    }

    mutating func append(_ implementation: Implementation) {
        if bottom == nil { bottom = implementation } else { above.append(implementation) }
    }

    /// Every other edit (a removal, a replacement) goes through an array: they are rarer than adding.
    mutating func replaceSubrange<C: Collection>(_ range: Range<Int>, with implementations: C)
    where C.Element == Implementation {
        var all = Array(self)
        all.replaceSubrange(range, with: implementations)
        bottom = all.first
        above = Array(all.dropFirst())
    }
}
