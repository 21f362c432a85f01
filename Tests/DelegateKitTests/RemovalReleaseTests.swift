import DelegateKit
import DelegateKitFixtures
import Glibc
import Testing

/// What a removal removed is released when it returns, when no call runs it: the closure and everything
/// it captured; otherwise when the last call running it returns. Each closure here captures a
/// `Captured`, whose deinitializer counts; C's fixture calls the slot as a C library would, from this
/// thread or from 4 threads of its own.
@Suite struct RemovalReleaseTests {
    /// Counts its instances alive; one per test, so tests running in parallel do not mix counts.
    final class Captured: Sendable {
        let alive: Counter
        let value: Int64

        init(_ alive: Counter, value: Int64) {
            self.alive = alive
            self.value = value
            alive.increment()
        }

        deinit { alive.increment(by: -1) }
    }

    static func callTransform(_ delegate: DynamicDelegate, _ value: Int64) -> Int64 {
        var called = false
        return fx_plugin_transform(delegate.table.assumingMemoryBound(to: fx_plugin.self), nil, value, &called)
    }

    @Test func removalReplacementAndCancelReleaseWhatTheyRemoved() throws {
        let alive = Counter()
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        for round in Int64(1)...100 {
            // implement + removeImplementation
            do {
                let captured = Captured(alive, value: round)
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + captured.value }
            }
            #expect(Self.callTransform(delegate, 1) == 1 + round)
            #expect(alive.value == 1)
            delegate.removeImplementation(for: "transform")
            #expect(alive.value == 0, "round \(round): implement + remove")

            // a replacing implement releases the replaced closure, not the new one
            for step in Int64(0)..<2 {
                let captured = Captured(alive, value: round * 10 + step)
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + captured.value }
            }
            #expect(alive.value == 1, "round \(round): replacement")
            #expect(Self.callTransform(delegate, 0) == round * 10 + 1)

            // override + Registration.remove, above the plain implementation
            let registration: Registration
            do {
                let captured = Captured(alive, value: round)
                registration = try delegate.override("transform") {
                    (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                    next(context, x) * captured.value
                }
            }
            #expect(Self.callTransform(delegate, 0) == (round * 10 + 1) * round)
            registration.remove()
            #expect(alive.value == 1, "round \(round): override + remove")

            // observe + cancel, the token kept by the caller afterwards
            let calls = Counter()
            let token: ObservationToken
            do {
                let captured = Captured(alive, value: round)
                token = try delegate.observe("transform", .after) { (_: UnsafeMutableRawPointer?, x: Int64) in
                    calls.increment(by: Int(captured.value - round + 1))
                }
            }
            _ = Self.callTransform(delegate, 0)
            token.cancel()
            #expect(calls.value == 1)
            #expect(alive.value == 1, "round \(round): observe + cancel")
            _ = Self.callTransform(delegate, 0)
            #expect(calls.value == 1)  // cancelled: not called again
            withExtendedLifetime(token) {}

            delegate.removeImplementation(for: "transform")
            #expect(alive.value == 0, "round \(round): the last removal")
        }
    }

    @Test func releasedOnceTheLastCallReturnsWhileFourCThreadsCallTheSlot() throws {
        let alive = Counter()
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let implementations: Int64 = 8
        // Implementation k answers i * 1000 + k, so the hammer can tell a wrong result from a right one.
        func implement(_ k: Int64) throws {
            let captured = Captured(alive, value: k)
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in i * 1000 + captured.value }
        }
        try implement(0)
        // A fixed number of rounds, each starting with C threads calling: a hammer that finished is
        // joined and started again, so the rounds race with calls however fast this machine is.
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        let iterations: Int64 = 20_000
        var hammers: Int64 = 1, calls: Int64 = 0, wrong: Int64 = 0, nullSlots: Int64 = 0
        var hammer = try #require(fx_hammer_start(table, 4, iterations, implementations))
        func join() {
            var wrongHere: Int64 = 0, nullsHere: Int64 = 0
            calls += fx_hammer_join(hammer, &wrongHere, &nullsHere)
            wrong += wrongHere
            nullSlots += nullsHere
        }
        // A removal returns at once; what a C thread was running at that moment goes when its call
        // returns. Waiting for those calls must therefore find everything removed already released.
        var leftAfterWaiting = 0
        func settled(_ expected: Int) throws {
            #expect(try delegate.waitForRemovedCalls(timeout: .seconds(30)))
            leftAfterWaiting = max(leftAfterWaiting, alive.value - expected)
        }
        for round in Int64(1)...12 {
            if fx_hammer_finished(hammer) {
                join()
                hammer = try #require(fx_hammer_start(table, 4, iterations, implementations))
                hammers += 1
            }
            try implement(round % implementations)  // replaces: the replaced one goes
            try settled(1)
            let token = try delegate.observe("transform", .before) { [captured = Captured(alive, value: 0)] (_: UnsafeMutableRawPointer?, _: Int64) in
                _ = captured.value
            }
            token.cancel()
            try settled(1)
            if round % 3 == 0 {
                delegate.removeImplementation(for: "transform")
                try settled(0)
                try implement(round % implementations)
            }
        }
        join()
        #expect(calls + nullSlots == hammers * 4 * iterations)
        #expect(wrong == 0)
        #expect(leftAfterWaiting == 0, "a removed closure outlived the last call running it")
        delegate.removeImplementation(for: "transform")
        #expect(alive.value == 0)
    }

    @Test func aClosureThatRemovesItselfIsReleasedOnceItsCallEnds() throws {
        let alive = Counter()
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        do {
            let captured = Captured(alive, value: 5)
            try delegate.implement("transform") { [unowned delegate] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                delegate.removeImplementation(for: "transform")
                return x + captured.value  // still running: what it captured must still be there
            }
        }
        #expect(Self.callTransform(delegate, 1) == 6)
        // Its own call was running during the removal: it is released as that call returns. The reclaimer
        // is the process's: a change of another test's delegate, on another thread, may have taken it
        // from the reclaimer's list a moment before, and release it a moment after. So a moment is
        // allowed, without calling into DelegateKit, whose own collection would hide a call that did not
        // release it.
        for _ in 0..<2_000 where alive.value != 0 { usleep(1_000) }
        #expect(alive.value == 0)
    }
}
