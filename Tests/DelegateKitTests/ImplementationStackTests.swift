@testable import DelegateKit
import Testing

/// A slot's stack walked and edited in place (``ImplementationStack``): what its own walks and its
/// one-pass removal do must be what `Array`'s do to the same entries.
@Suite struct ImplementationStackTests {
    /// Five entries keyed 0 to 4, bottom to top.
    private static func entries() throws -> [Implementation] {
        let thunk = try CallThunk(signature: CSignature(.void, [])) { _, _ in }
        // `once` entries need no stub of their own, which only a delegate's slot can give.
        return (0..<5).map { Implementation(key: SlotKey($0), body: .plain(thunk), once: true, typed: nil, stub: nil) }
    }

    private static func stack(_ entries: some Sequence<Implementation>) -> ImplementationStack {
        var stack = ImplementationStack()
        for entry in entries { stack.append(entry) }
        return stack
    }

    private static func identities(_ entries: some Sequence<Implementation>) -> [ObjectIdentifier] {
        entries.map(ObjectIdentifier.init)
    }

    @Test func removingAnySubsetKeepsTheRestInOrder() throws {
        let all = try Self.entries()
        for count in 0...all.count {
            let entries = Array(all.prefix(count))
            for mask in 0..<(1 << count) {
                var stack = Self.stack(entries)
                let doomed = { (entry: Implementation) in
                    entries.firstIndex { $0 === entry }.map { mask & (1 << $0) != 0 } ?? false
                }
                var asked = 0
                let removed = stack.remove { asked += 1; return doomed($0) }
                let kept = entries.filter { !doomed($0) }
                #expect(Self.identities(removed) == Self.identities(entries.filter(doomed)), "mask \(mask) of \(count)")
                #expect(Self.identities(stack) == Self.identities(kept), "mask \(mask) of \(count)")
                #expect(asked == count, "each entry asked once (mask \(mask) of \(count))")
                #expect(stack.count == count - removed.count && stack.top === stack.last)
            }
        }
    }

    @Test func walksMatchTheCollectionsOwn() throws {
        let entries = try Self.entries()
        for count in 0...entries.count {
            var stack = Self.stack(entries.prefix(count))
            var walked: [ObjectIdentifier] = []
            stack.forEach { walked.append(ObjectIdentifier($0)) }
            #expect(walked == entries.prefix(count).map(ObjectIdentifier.init))
            #expect(stack.top === entries.prefix(count).last)
            for target in entries {
                #expect(stack.firstIndex { $0 === target } == entries.prefix(count).firstIndex { $0 === target })
                #expect(stack.contains { $0 === target } == entries.prefix(count).contains { $0 === target })
            }
        }
    }
}
