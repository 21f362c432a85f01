import DelegateKit
import DelegateKitFixtures
import Testing

/// C threads calling through a table while Swift replaces the slot they call.
@Suite struct ThreadTests {
    @Test func fourCThreadsCallWhileAnotherThreadReimplements() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let implementations: Int64 = 400
        // Implementation k answers i * 1000 + k, so every result names the implementation that made it.
        func implement(_ k: Int64) throws {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in i * 1000 + k }
        }
        try implement(0)
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        let iterations: Int64 = 200_000
        // Keep replacing for as long as C calls, so every call races with a replacement; C calls again
        // until more than ten replacements raced with calls. (With the suite's other tests on a loaded
        // machine, this thread once made a single replacement while the four made all their calls.)
        var replacements: Int64 = 0, rounds = 0
        while replacements <= 10 && rounds < 100 {
            rounds += 1
            let hammer = try #require(fx_hammer_start(table, 4, iterations, implementations))
            while !fx_hammer_finished(hammer) {
                replacements += 1
                try implement(replacements % implementations)
            }
            var wrong: Int64 = 0, nullSlots: Int64 = 0
            let calls = fx_hammer_join(hammer, &wrong, &nullSlots)
            #expect(wrong == 0)
            #expect(nullSlots == 0)  // a slot being replaced is never NULL in between
            #expect(calls == 4 * iterations)
        }
        #expect(replacements > 10, "\(replacements) replacements in \(rounds) rounds of calls")
    }

    @Test func removeAndImplementRaceWithCalls() throws {
        // Removal makes the slot NULL; C sees either NULL or a whole implementation, never anything else.
        // A call that loaded the removed one's pointer gets the default value, counted with the NULLs.
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in i * 1000 }
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        let iterations: Int64 = 100_000
        let hammer = try #require(fx_hammer_start(table, 4, iterations, 2))
        var round = 0
        while !fx_hammer_finished(hammer) {
            round += 1
            delegate.removeImplementation(for: "transform")
            let k = Int64(round % 2)
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in i * 1000 + k }
        }
        var wrong: Int64 = 0, nullSlots: Int64 = 0
        let calls = fx_hammer_join(hammer, &wrong, &nullSlots)
        #expect(wrong == 0)
        #expect(calls + nullSlots == 4 * iterations)
    }
}
