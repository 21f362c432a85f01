import DelegateKitCSQLite
import DelegateKit
import DelegateKitExamples
import DelegateKitFixtures
import Dispatch
import Foundation
import Synchronization
import Testing

/// One implementation or observer the stress test added: how often it ran, and whether it ran in a call
/// made after its removal (or cancellation) had returned, which a removal promises never happens. (A call
/// made before may still run it: a removal does not wait for calls under way.)
final class StressEntry: Sendable {
    let calls = Atomic<Int>(0)
    let late = Atomic<Int>(0)
    /// The epoch (fx_epoch_advance) taken right after the removal returned; Int64.max until then.
    let removedAt = Atomic<Int64>(.max)
    let isPlain: Bool

    init(isPlain: Bool) { self.isPlain = isPlain }

    func ran() {
        // The calling thread noted the epoch right before its call (fx_epoch_note): a call noted at or
        // after the removal's epoch was made after the removal returned. Sequentially consistent, like
        // the epoch's own loads and stores.
        if removedAt.load(ordering: .sequentiallyConsistent) <= fx_epoch_noted() { late.add(1, ordering: .relaxed) }
        calls.add(1, ordering: .relaxed)
        if isPlain { Self.plainRuns.add(1, ordering: .relaxed) }
    }

    /// Plain implementations' runs in this process, each scenario being a process of its own: the hammer
    /// runs until there are enough.
    static let plainRuns = Atomic<Int>(0)

    /// Called right after the removal returned.
    func markRemoved() { removedAt.store(fx_epoch_advance(), ordering: .sequentiallyConsistent) }
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
    /// Changes made while the hammer ran (from the one after it started).
    var actions = 0
    /// Whether this mutator has signalled that the run is long enough on its side.
    var isDone = false
    var everything: [StressEntry] = []
}

/// A stress run that could not start.
struct StressFailure: Error, CustomStringConvertible {
    let description: String
}

/// The hammer once started, for the mutators, which start first: they stop once it has finished.
final class HammerHandle: Sendable {
    private let address = Atomic<UInt>(0)
    private let abandoned = Atomic<Bool>(false)

    /// Stops the mutators of a hammer that could not start.
    func abandon() { abandoned.store(true, ordering: .releasing) }

    func start(_ hammer: OpaquePointer) { address.store(UInt(bitPattern: Int(bitPattern: hammer)), ordering: .releasing) }

    /// Whether the hammer runs: started, and not yet finished.
    var isRunning: Bool {
        guard let hammer = OpaquePointer(bitPattern: address.load(ordering: .acquiring)) else { return false }
        return !fx_hammer_finished(hammer)
    }

    /// Whether the hammer has finished (or will never start).
    var hasFinished: Bool {
        if abandoned.load(ordering: .acquiring) { return true }
        guard let hammer = OpaquePointer(bitPattern: address.load(ordering: .acquiring)) else { return false }
        return fx_hammer_finished(hammer)
    }
}

/// Four C threads call one slot while two Swift threads implement, override, remove, observe and
/// cancel on it. Every call is accounted for, and nothing runs in a call made after its removal returned.
/// Each scenario runs in a child process with a watchdog (`inStressChild`): threads wait for one another
/// here, and a change that blocked would stop the whole suite instead of failing it.
@Suite struct StressTests {
    /// Calls per C thread at least: short in CI; `DELEGATEKIT_STRESS_ITERATIONS` makes a longer run.
    static let iterations = Int(ProcessInfo.processInfo.environment["DELEGATEKIT_STRESS_ITERATIONS"] ?? "") ?? 150_000
    /// Changes each mutator makes at least while C calls (`DELEGATEKIT_STRESS_CHANGES`).
    ///
    /// The hammer runs until both are done, not for a fixed number of calls: on a loaded machine a
    /// mutator can wait tens of milliseconds for the delegate's lock while its holder is preempted, as
    /// long as a fixed run of calls lasted, and a CI run once saw one mutator make a single change in it.
    static let changes = Int(ProcessInfo.processInfo.environment["DELEGATEKIT_STRESS_CHANGES"] ?? "") ?? 300
    static let seed = UInt64(ProcessInfo.processInfo.environment["DELEGATEKIT_STRESS_SEED"] ?? "") ?? 0xDE1E_6A7E

    /// Adds and removes layers and observers on "transform" until `hammer` has finished, signalling
    /// `started` after its first change; counts the changes made while the hammer runs, and signals
    /// `done` once they are ``changes`` and the plain implementations have run 4 × ``iterations`` times.
    static func mutate(
        _ delegate: DynamicDelegate, seed: UInt64, name: String, log: MutatorLog, hammer: HammerHandle,
        started: DispatchSemaphore, done: DispatchSemaphore
    ) {
        var random = SeededRandom(state: seed)
        var live: [(tracked: StressEntry, key: String?, token: ObservationToken?)] = []
        var serial = 0
        while !hammer.hasFinished {
            serial += 1
            if serial == 2 { started.signal() }
            if hammer.isRunning { log.actions += 1 }
            if !log.isDone && log.actions >= changes && StressEntry.plainRuns.load(ordering: .relaxed) >= 4 * iterations {
                log.isDone = true
                done.signal()
            }
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
                        check(delegate.removeImplementation(for: "transform", key: key), "\(name) could not remove \(key)")
                    } else {
                        victim.token?.cancel()
                    }
                    victim.tracked.markRemoved()
                    log.everything.append(victim.tracked)
                }
            } catch {
                fail("\(name): mutation failed: \(error)")
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
        let logs = [MutatorLog(), MutatorLog()]
        // The mutators first, the hammer once both have made a change: a thread's start can take longer
        // than the hammer's whole run on a loaded machine (the hammer's only shared state the mutators
        // read is its atomic "finished" count). Threads of their own: the test's task must not wait on
        // Dispatch's pool, which runs tests too.
        let handle = HammerHandle()
        let started = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        for (index, log) in logs.enumerated() {
            Thread.detachNewThread {
                mutate(delegate, seed: seed &+ UInt64(index), name: "m\(index)", log: log, hammer: handle, started: started, done: done)
                finished.signal()
            }
        }
        for _ in logs { started.wait() }
        guard let hammer = fx_hammer_start(table, 4, .max, 1) else {
            handle.abandon()
            for _ in logs { finished.wait() }
            throw StressFailure(description: "fx_hammer_start failed")
        }
        handle.start(hammer)
        for _ in logs { done.wait() }
        fx_hammer_stop(hammer)
        for _ in logs { finished.wait() }
        var wrong: Int64 = 0, nullSlots: Int64 = 0
        let calls = fx_hammer_join(hammer, &wrong, &nullSlots)

        let tracked = logs.flatMap(\.everything)
        let plainCalls = tracked.filter(\.isPlain).reduce(base.calls.load(ordering: .relaxed)) { $0 + $1.calls.load(ordering: .relaxed) }
        let layerCalls = tracked.filter { !$0.isPlain }.reduce(0) { $0 + $1.calls.load(ordering: .relaxed) }
        let late = tracked.reduce(0) { $0 + $1.late.load(ordering: .relaxed) }
        check(calls >= Int64(4 * iterations), "\(calls) calls, fewer than \(4 * iterations)")
        check(wrong == 0, "\(wrong) wrong results")
        check(nullSlots == 0, "\(nullSlots) calls found the slot NULL")  // the base implementation is always below everything
        check(Int64(plainCalls) == calls, "\(plainCalls) plain runs for \(calls) calls")  // each call ends in exactly one
        check(late == 0, "\(late) late runs")  // nothing ran in a call made after its removal or cancellation returned
        return "\(calls) calls, \(plainCalls) served by \(tracked.filter(\.isPlain).count + 1) plain implementations, "
            + "\(layerCalls) override and observer runs, changes \(logs.map { String($0.actions) }.joined(separator: " + ")), \(late) late"
    }

    @Test func callsRaceWithImplementOverrideRemoveObserveAndCancel() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inStressChild(StressTests.tableReadInPlace)
        }, echo: true)
    }

    @Test func stableSlotsInATableCCopied() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inStressChild(StressTests.stableTableCopiedByC)
        }, echo: true)
    }

    @Test func sqliteVFSWithTwoConnectionsWhileLayersComeAndGo() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inStressChild(StressTests.sqliteVFSWhileLayersComeAndGo)
        }, echo: true)
    }

    static func tableReadInPlace() throws -> String {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        return "stress, table read in place: " + (try run(delegate, calling: table))
    }

    static func stableTableCopiedByC() throws -> String {
        let delegate = TypedDelegate(for: fx_plugin.self)
        try delegate.setPolicy(.stable)
        // The copy is taken before anything is implemented: only a stable slot makes later changes reach it.
        let copy = UnsafeMutablePointer<fx_plugin>.allocate(capacity: 1)
        defer { copy.deallocate() }
        copy.initialize(to: delegate.typedTable.pointee)
        return "stress, stable table copied by C: " + (try run(delegate, calling: copy))
    }

    /// Two connections write and read one database through a wrapped VFS while a thread adds and removes
    /// layers on its file methods. Every read is seen by both permanent counters, the data is whole,
    /// and no removed layer runs in a statement begun after its removal returned.
    static func sqliteVFSWhileLayersComeAndGo() throws -> String {
        let traced = try TracedVFS(name: "stress-\(getpid())")
        let seen = Atomic<Int>(0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-stress-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("stress.db").path

        @Sendable func open() throws -> OpaquePointer {
            var db: OpaquePointer?
            guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, traced.name) == SQLITE_OK,
                let db else { throw CocoaError(.fileReadUnknown) }
            sqlite3_busy_timeout(db, 10_000)
            return db
        }
        let setup = try open()
        _ = try sqliteQuery(setup, "PRAGMA journal_mode=WAL")
        _ = try sqliteQuery(setup, "CREATE TABLE t(writer INTEGER, n INTEGER)")
        // The database and its write-ahead log get method tables of their own; both exist by now.
        let tables = traced.fileMethods
        check(!tables.isEmpty, "no file method tables")
        let seenWrites = Atomic<Int>(0)
        let tokens = try tables.flatMap { files in
            [
                try files.observe("xRead", .before) { (_: UnsafeMutablePointer<sqlite3_file>?, _: UnsafeMutableRawPointer?, _: Int32, _: Int64) in
                    seen.add(1, ordering: .relaxed)
                },
                try files.observe("xWrite", .after) { (_: UnsafeMutablePointer<sqlite3_file>?, _: UnsafeRawPointer?, _: Int32, _: Int64) in
                    seenWrites.add(1, ordering: .relaxed)
                },
            ]
        }
        let readsBefore = traced.reads, writesBefore = traced.writes
        let rows = 300
        let writersDone = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        let failures = Atomic<Int>(0)
        for writer in 0..<2 {
            Thread.detachNewThread {
                do {
                    let db = try open()
                    defer { sqlite3_close(db) }
                    for n in 0..<rows {
                        // Every VFS call of the statement is made after this.
                        fx_epoch_note()
                        _ = try sqliteQuery(db, "INSERT INTO t VALUES (\(writer), \(n))")
                        if n % 10 == 0 {
                            fx_epoch_note()
                            _ = try sqliteQuery(db, "SELECT count(*), sum(n) FROM t WHERE writer = \(writer)")
                        }
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                    print("writer \(writer): \(error)")
                }
                writersDone.add(1, ordering: .releasing)
                finished.signal()
            }
        }
        // The mutator: pass-through layers on xRead and xWrite, added and removed until the writers finish.
        var random = SeededRandom(state: seed)
        var live: [(entry: StressEntry, files: TypedDelegate<sqlite3_io_methods>, method: String, key: String)] = []
        var retired: [StressEntry] = []
        var serial = 0
        while writersDone.load(ordering: .acquiring) < 2 {
            serial += 1
            if live.count < 4, random.next() % 2 == 0 {
                let files = tables[Int(random.next() % UInt64(tables.count))]
                let entry = StressEntry(isPlain: false)
                let key = "layer-\(serial)"
                if random.next() % 2 == 0 {
                    try files.override(\.xRead, key: key) {
                        (next: Next<UnsafeMutablePointer<sqlite3_file>?, UnsafeMutableRawPointer?, Int32, Int64, Int32>,
                         file: UnsafeMutablePointer<sqlite3_file>?, buffer: UnsafeMutableRawPointer?, n: Int32, offset: Int64) -> Int32 in
                        entry.ran()
                        return next(file, buffer, n, offset)
                    }
                    live.append((entry, files, "xRead", key))
                } else {
                    try files.override(\.xWrite, key: key) {
                        (next: Next<UnsafeMutablePointer<sqlite3_file>?, UnsafeRawPointer?, Int32, Int64, Int32>,
                         file: UnsafeMutablePointer<sqlite3_file>?, buffer: UnsafeRawPointer?, n: Int32, offset: Int64) -> Int32 in
                        entry.ran()
                        return next(file, buffer, n, offset)
                    }
                    live.append((entry, files, "xWrite", key))
                }
            } else if !live.isEmpty {
                let victim = live.remove(at: Int(random.next() % UInt64(live.count)))
                check(victim.files.removeImplementation(for: victim.method, key: victim.key), "could not remove \(victim.key)")
                victim.entry.markRemoved()
                retired.append(victim.entry)
            }
            usleep(200)
        }
        for _ in 0..<2 { finished.wait() }
        for entry in live {
            entry.files.removeImplementation(for: entry.method, key: entry.key)
            entry.entry.markRemoved()
            retired.append(entry.entry)
        }
        for token in tokens { token.cancel() }
        let readsDuring = traced.reads - readsBefore, writesDuring = traced.writes - writesBefore

        check(failures.load(ordering: .relaxed) == 0, "\(failures.load(ordering: .relaxed)) writers failed")
        let rowsWritten = try sqliteQuery(setup, "SELECT writer, count(*), sum(n) FROM t GROUP BY writer ORDER BY writer")
        let sum = rows * (rows - 1) / 2
        check(rowsWritten == [["0", "\(rows)", "\(sum)"], ["1", "\(rows)", "\(sum)"]], "rows written: \(rowsWritten)")
        let integrity = try sqliteQuery(setup, "PRAGMA integrity_check")
        check(integrity == [["ok"]], "integrity check: \(integrity)")
        sqlite3_close(setup)
        // The observers were there from before the writers to after them: they saw every call TracedVFS counted.
        check(traced.fileMethods.count == tables.count, "a file with unobserved methods appeared")
        check(seen.load(ordering: .relaxed) == readsDuring, "observed \(seen.load(ordering: .relaxed)) of \(readsDuring) reads")
        check(seenWrites.load(ordering: .relaxed) == writesDuring, "observed \(seenWrites.load(ordering: .relaxed)) of \(writesDuring) writes")
        check(readsDuring > 0 && writesDuring >= 2 * rows, "\(readsDuring) reads and \(writesDuring) writes")
        let late = retired.reduce(0) { $0 + $1.late.load(ordering: .relaxed) }
        check(late == 0, "\(late) late layer runs")
        return "stress, SQLite VFS: \(traced.reads) reads and \(traced.writes) writes from 2 connections, "
            + "\(retired.count) layers added and removed, \(retired.reduce(0) { $0 + $1.calls.load(ordering: .relaxed) }) layer runs, \(late) late"
    }
}

/// A stress scenario's child process: a watchdog, the scenario on the path the environment chooses (CI
/// runs the suite on each), its summary and "done". A failed check prints why and ends the child
/// (`fail`). Five minutes rather than `inChild`'s one: each scenario takes seconds, many times that under
/// the sanitizers. Exits normally after LeakSanitizer's check (`finishCheckingLeaks`), as the test
/// process would.
func inStressChild(_ scenario: () throws -> String) -> Never {
    startWatchdog(seconds: 300)
    dup2(1, 2)  // the sanitizers' reports in the output the parent shows
    do {
        print(try scenario())
    } catch {
        fail("threw \(error)")
    }
    finishCheckingLeaks()
}
