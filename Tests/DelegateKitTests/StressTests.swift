import DelegateKit
import DelegateKitFixtures
import Dispatch
import Foundation
import Synchronization
import Testing

/// One implementation or observer the stress test added: how often it ran, and whether it ran after
/// its removal (or cancellation) had returned.
final class StressEntry: Sendable {
    let calls = Atomic<Int>(0)
    let late = Atomic<Int>(0)
    let removed = Atomic<Bool>(false)
    let isPlain: Bool

    init(isPlain: Bool) { self.isPlain = isPlain }

    func ran() {
        // Sequentially consistent, like the store in `markRemoved`: a call that starts after that store
        // sees it.
        if removed.load(ordering: .sequentiallyConsistent) { late.add(1, ordering: .relaxed) }
        calls.add(1, ordering: .relaxed)
    }

    func markRemoved() { removed.store(true, ordering: .sequentiallyConsistent) }
}

/// A reproducible random source (SplitMix64), so a failing run can be replayed from its seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What one mutator thread did, and everything it added.
final class MutatorLog: @unchecked Sendable {  // Written by its own thread only, read after joining.
    var actions = 0
    var everything: [StressEntry] = []
}

/// Four C threads call one slot while two Swift threads implement, override, remove, observe and
/// cancel on it. Every call is accounted for, and nothing runs after its removal returned.
@Suite struct StressTests {
    /// Calls per C thread: short in CI; `DELEGATEKIT_STRESS_ITERATIONS` makes a longer run.
    static let iterations = Int64(ProcessInfo.processInfo.environment["DELEGATEKIT_STRESS_ITERATIONS"] ?? "") ?? 150_000
    static let seed = UInt64(ProcessInfo.processInfo.environment["DELEGATEKIT_STRESS_SEED"] ?? "") ?? 0xDE1E_6A7E

    typealias TransformNext = Next<UnsafeMutableRawPointer?, Int64, Int64>

    /// Adds and removes layers and observers on "transform" until `done` says stop.
    static func mutate(_ delegate: DynamicDelegate, seed: UInt64, name: String, log: MutatorLog, done: @escaping () -> Bool) {
        var random = SeededRandom(state: seed)
        var live: [(tracked: StressEntry, key: String?, token: ObservationToken?)] = []
        var serial = 0
        while !done() {
            serial += 1
            log.actions += 1
            let action = live.count >= 8 ? 5 : Int(random.next() % 6)
            do {
                switch action {
                case 0:
                    let tracked = StressEntry(isPlain: true)
                    let key = "\(name)-plain-\(serial)"
                    try delegate.implement("transform", key: key) { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in
                        tracked.ran()
                        return i * 1000
                    }
                    live.append((tracked, key, nil))
                case 1:
                    let tracked = StressEntry(isPlain: false)
                    let key = "\(name)-override-\(serial)"
                    try delegate.override("transform", key: key) { (next: TransformNext, context: UnsafeMutableRawPointer?, i: Int64) -> Int64 in
                        tracked.ran()
                        return next(context, i)
                    }
                    live.append((tracked, key, nil))
                case 2, 3:
                    let tracked = StressEntry(isPlain: false)
                    let token = try delegate.observe("transform", action == 2 ? .before : .after) { (_: UnsafeMutableRawPointer?, _: Int64) in
                        tracked.ran()
                    }
                    live.append((tracked, nil, token))
                default:
                    guard !live.isEmpty else { continue }
                    let victim = live.remove(at: Int(random.next() % UInt64(live.count)))
                    if let key = victim.key {
                        #expect(delegate.removeImplementation(for: "transform", key: key))
                    } else {
                        victim.token?.cancel()
                    }
                    victim.tracked.markRemoved()
                    log.everything.append(victim.tracked)
                }
            } catch {
                Issue.record("mutation failed: \(error)")
            }
        }
        for entry in live {
            if let key = entry.key { delegate.removeImplementation(for: "transform", key: key) } else { entry.token?.cancel() }
            entry.tracked.markRemoved()
            log.everything.append(entry.tracked)
        }
    }

    /// Runs the hammer on `table` against two mutators, then checks the accounts.
    static func run(_ delegate: DynamicDelegate, calling table: UnsafePointer<fx_plugin>) throws -> String {
        let base = StressEntry(isPlain: true)
        try delegate.implement("transform", key: "base") { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in
            base.ran()
            return i * 1000
        }
        let hammer = try #require(fx_hammer_start(table, 4, iterations, 1))
        // The hammer's only shared state read by the mutators is its atomic "finished" count.
        nonisolated(unsafe) let running = hammer
        let logs = [MutatorLog(), MutatorLog()]
        // Threads of their own: the test's task must not wait on Dispatch's pool, which runs tests too.
        let finished = DispatchSemaphore(value: 0)
        for (index, log) in logs.enumerated() {
            Thread.detachNewThread {
                mutate(delegate, seed: seed &+ UInt64(index), name: "m\(index)", log: log) { fx_hammer_finished(running) }
                finished.signal()
            }
        }
        for _ in logs { finished.wait() }
        var wrong: Int64 = 0, nullSlots: Int64 = 0
        let calls = fx_hammer_join(hammer, &wrong, &nullSlots)

        let tracked = logs.flatMap(\.everything)
        let plainCalls = tracked.filter(\.isPlain).reduce(base.calls.load(ordering: .relaxed)) { $0 + $1.calls.load(ordering: .relaxed) }
        let layerCalls = tracked.filter { !$0.isPlain }.reduce(0) { $0 + $1.calls.load(ordering: .relaxed) }
        let late = tracked.reduce(0) { $0 + $1.late.load(ordering: .relaxed) }
        #expect(calls == 4 * iterations)
        #expect(wrong == 0)
        #expect(nullSlots == 0)  // the base implementation is always there below everything
        #expect(Int64(plainCalls) == calls)  // every call ended in exactly one plain implementation
        #expect(late == 0)  // nothing ran after its removal or cancellation returned
        #expect(logs.allSatisfy { $0.actions > 10 })
        return "\(calls) calls, \(plainCalls) served by \(tracked.filter(\.isPlain).count + 1) plain implementations, "
            + "\(layerCalls) override and observer runs, \(logs.map(\.actions).reduce(0, +)) changes, \(late) late"
    }

    @Test func callsRaceWithImplementOverrideRemoveObserveAndCancel() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        print("stress, table read in place:", try Self.run(delegate, calling: table))
    }

    @Test func stableSlotsInATableCCopied() throws {
        let delegate = TypedDelegate(for: fx_plugin.self)
        try delegate.setPolicy(.stable)
        // The copy is taken before anything is implemented: only a stable slot makes later changes reach it.
        let copy = UnsafeMutablePointer<fx_plugin>.allocate(capacity: 1)
        defer { copy.deallocate() }
        copy.initialize(to: delegate.typedTable.pointee)
        print("stress, stable table copied by C:", try Self.run(delegate, calling: copy))
    }
}
