import DelegateKit
import DelegateKitFixtures
import Foundation
import Testing

/// Resident memory of this process, in bytes (`/proc/self/statm`, second field, in pages).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

/// Making and dropping closures and delegates gives their memory back: after a warm-up that fills
/// the caches (and, in debug builds, the bounded graveyard of dead closures), resident memory stays
/// flat however many more are made.
@Suite struct MemoryChurnTests {
    /// 1,000,000 closures and 10,000 delegates by default; `DELEGATEKIT_CHURN_SCALE` divides both
    /// (the valgrind run uses a small fraction).
    static let scale = max(1, Int(ProcessInfo.processInfo.environment["DELEGATEKIT_CHURN_SCALE"] ?? "") ?? 1)

    static func churnClosures(_ count: Int) throws {
        var total: Int64 = 0
        for i in 0..<count {
            let offset = Int64(i)
            let closure = try CClosure { (x: Int64) -> Int64 in x + offset }
            let function: @convention(c) (Int64) -> Int64 = try closure.functionPointer()
            total &+= function(1)
        }
        // Checked with precondition: this runs inside an exit test, where a failure must end the process.
        precondition(total == Int64(count) * Int64(count - 1) / 2 + Int64(count), "closures computed the wrong sum")
    }

    static func churnDelegates(_ count: Int) throws {
        for i in 0..<count {
            let delegate = DynamicDelegate(protocol: pluginProtocol)
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
            try delegate.override("transform") {
                (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                next(context, x) + 1
            }
            try delegate.override("transform", key: "second") {
                (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                next(context, x) * 2
            }
            let token = try delegate.observe("transform", .before) { (_: UnsafeMutableRawPointer?, _: Int64) in }
            var called = false
            let result = fx_plugin_transform(delegate.table.assumingMemoryBound(to: fx_plugin.self), nil, Int64(i), &called)
            precondition(result == (Int64(i) + 1) * 2, "the stack computed \(result) for \(i)")
            token.cancel()
            delegate.removeImplementation(for: "transform", key: "second")
        }
    }

    /// One long-lived delegate whose implementations, layers, observers, policy and forwarding come and
    /// go: each cycle of each kind leaves nothing behind (what a removal removed is released, the code C
    /// may still hold is reused by the slot). Every call is checked, so a cycle that broke the slot stops.
    static func churnOneDelegate(_ cycles: Int, _ delegate: DynamicDelegate, forwardingTo other: DynamicDelegate) throws {
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        func call(_ value: Int64) -> Int64 {
            var called = false
            return fx_plugin_transform(table, nil, value, &called)
        }
        for i in 0..<cycles {
            let offset = Int64(i)
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + offset }
            precondition(call(1) == 1 + offset, "implement: the slot computed the wrong value")
            delegate.removeImplementation(for: "transform")

            let registration = try delegate.override("transform") {
                (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                next(context, x) + offset
            }
            precondition(call(1) == offset, "override: the slot computed the wrong value")  // below it: nothing, 0
            registration.remove()

            let token = try delegate.observe("transform", .before) { (_: UnsafeMutableRawPointer?, x: Int64) in
                precondition(x == offset, "observe: the observer saw the wrong argument")
            }
            _ = call(offset)
            token.cancel()

            try delegate.setPolicy(.stable, for: "transform")
            try delegate.setForwardingTarget(.delegate(other))
            precondition(call(2) == 4, "forwarding: the slot computed the wrong value")
            try delegate.setForwardingTarget(nil)
            try delegate.setPolicy(.nullWhenUnimplemented, for: "transform")
        }
    }

    /// Ends an exit test: prints `report` with the growth, and succeeds when the growth is under `bound`.
    /// A sanitizer holds freed memory back on purpose (AddressSanitizer's quarantine), so the bound only
    /// means something without one; .ci/run names the sanitizer it runs under.
    static func finish(growth: Int, bound: Int, report: String) -> Never {
        print("\(report), growth \(growth >> 10) KiB")
        let bounded = growth < bound || ProcessInfo.processInfo.environment["DELEGATEKIT_SANITIZER"] != nil
        exit(bounded ? 0 : 1)
    }

    /// Resident memory before `cycles` cycles of churn on one delegate (after a warm-up), and its growth.
    /// The delegates are gone when it returns: LeakSanitizer, run at exit, takes the side table of a weak
    /// reference to a live object for a leak.
    static func residentGrowthOfOneDelegate(cycles: Int) throws -> (start: Int, growth: Int) {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let other = DynamicDelegate(protocol: pluginProtocol)
        try other.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x * 2 }
        try churnOneDelegate(min(cycles, 20_000), delegate, forwardingTo: other)
        let start = residentBytes()
        try churnOneDelegate(cycles, delegate, forwardingTo: other)
        return (start, residentBytes() - start)
    }

    /// 1,000,000 cycles of each kind on one delegate by default (`DELEGATEKIT_CHURN_SCALE` divides them),
    /// in a process of its own: resident memory after the warm-up grows by less than 4 MiB.
    @Test func aLongLivedDelegateStaysFlatUnderChurn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let cycles = 1_000_000 / MemoryChurnTests.scale
            do {
                let (start, growth) = try MemoryChurnTests.residentGrowthOfOneDelegate(cycles: cycles)
                MemoryChurnTests.finish(growth: growth, bound: 4 << 20,
                                        report: "one delegate: \(cycles) cycles of each kind; resident \(start >> 20) MiB before")
            } catch {
                print("churn failed: \(error)")
                exit(2)
            }
        }
        print(String(decoding: result?.standardOutputContent ?? [], as: UTF8.self), terminator: "")
    }

    /// Runs in a process of its own (an exit test): resident memory is the whole process's, and other
    /// tests running alongside would move it.
    @Test func residentMemoryStaysFlatUnderChurn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let closures = 1_000_000 / MemoryChurnTests.scale
            let delegates = 10_000 / MemoryChurnTests.scale
            do {
                // Warm-up: caches, the graveyard's fixed capacity, allocator arenas.
                try MemoryChurnTests.churnClosures(min(closures, 60_000))
                try MemoryChurnTests.churnDelegates(min(delegates, 2_000))
                let start = residentBytes()
                try MemoryChurnTests.churnClosures(closures)
                try MemoryChurnTests.churnDelegates(delegates)
                MemoryChurnTests.finish(growth: residentBytes() - start, bound: 16 << 20,
                                        report: "churn: \(closures) closures and \(delegates) delegates; resident \(start >> 20) MiB before")
            } catch {
                print("churn failed: \(error)")
                exit(2)
            }
        }
        print(String(decoding: result?.standardOutputContent ?? [], as: UTF8.self), terminator: "")
    }
}
