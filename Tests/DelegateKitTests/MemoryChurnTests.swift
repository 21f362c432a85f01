import CDelegateKitTrampolines
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

    /// What the process holds, three ways: resident memory (pages: anything mapped, libffi's own
    /// allocations included, but moved by the allocator's caches), malloc's bytes in use (to the byte: a
    /// list that grows by a pointer per removal shows) and the trampoline slots live code holds.
    struct Footprint {
        var resident = residentBytes(), heap = fx_heap_in_use(), liveSlots = cffi_trampolines_live()

        /// Ends an exit test: prints `report` with what was added from `before` to `after`, and succeeds when every
        /// trampoline slot is back, the heap grew by less than `heapBound` bytes (`nil`: not checked) and
        /// resident memory by less than `residentBound`. A sanitizer holds freed memory back on purpose
        /// (AddressSanitizer's quarantine), in an allocator of its own that mallinfo2 does not see, so the
        /// two memory bounds only mean something without one; .ci/run names the sanitizer it runs under.
        static func finish(from before: Footprint, to after: Footprint = Footprint(), report: String,
                           heapBound: Int?, residentBound: Int) -> Never {
            let resident = after.resident - before.resident, heap = after.heap - before.heap
            let slots = after.liveSlots - before.liveSlots
            print("\(report); resident \(before.resident >> 20) MiB before, growth \(resident >> 10) KiB; heap "
                  + "growth \(heap) bytes; \(slots) trampoline slots more held")
            let sanitized = ProcessInfo.processInfo.environment["DELEGATEKIT_SANITIZER"] != nil
            let bounded = resident < residentBound && heap < heapBound ?? .max
            exit(slots == 0 && (bounded || sanitized) ? 0 : 1)
        }
    }

    /// The footprint after a warm-up of `cycles` cycles (20,000 at most) on one delegate, and after
    /// `cycles` more. The delegates are gone when it returns: LeakSanitizer, run at exit, takes the side
    /// table of a weak reference to a live object for a leak.
    static func footprintsOfOneDelegate(cycles: Int) throws -> (before: Footprint, after: Footprint) {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let other = DynamicDelegate(protocol: pluginProtocol)
        try other.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x * 2 }
        try churnOneDelegate(min(cycles, 20_000), delegate, forwardingTo: other)
        let before = Footprint()
        try churnOneDelegate(cycles, delegate, forwardingTo: other)
        return (before, Footprint())
    }

    /// 100,000 cycles of each kind on one delegate by default (`DELEGATEKIT_CHURN_SCALE` divides them), in a
    /// process of its own, after a warm-up: no slot more held, the heap grown by less than 64 KiB (under a
    /// byte per cycle), resident memory by less than 4 MiB. (It ran 1,000,000 cycles against the resident
    /// bound alone, four and a half minutes of a debug build: the heap shows to the byte what resident
    /// pages showed only over ten times the cycles.)
    @Test func aLongLivedDelegateStaysFlatUnderChurn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let cycles = 100_000 / MemoryChurnTests.scale
            do {
                let (before, after) = try MemoryChurnTests.footprintsOfOneDelegate(cycles: cycles)
                Footprint.finish(from: before, to: after, report: "one delegate: \(cycles) cycles of each kind",
                                 heapBound: 64 << 10, residentBound: 4 << 20)
            } catch {
                print("churn failed: \(error)")
                exit(2)
            }
        }
        print(String(decoding: result?.standardOutputContent ?? [], as: UTF8.self), terminator: "")
    }

    /// 1,000,000 closures (each a trampoline slot of its own) and 10,000 delegates by default, in a process
    /// of its own (resident memory is the whole process's, and tests alongside would move it), after a
    /// warm-up of caches, the graveyard's fixed capacity and allocator arenas: every slot back, resident
    /// memory grown by less than 16 MiB. The heap is not bounded here: in a debug build the graveyard keeps
    /// the last dead closures and tables, and which of them it holds at the end changes its bytes.
    @Test func residentMemoryStaysFlatUnderChurn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            let closures = 1_000_000 / MemoryChurnTests.scale
            let delegates = 10_000 / MemoryChurnTests.scale
            do {
                try MemoryChurnTests.churnClosures(min(closures, 60_000))
                try MemoryChurnTests.churnDelegates(min(delegates, 2_000))
                let before = Footprint()
                try MemoryChurnTests.churnClosures(closures)
                try MemoryChurnTests.churnDelegates(delegates)
                Footprint.finish(from: before, report: "churn: \(closures) closures and \(delegates) delegates",
                                 heapBound: nil, residentBound: 16 << 20)
            } catch {
                print("churn failed: \(error)")
                exit(2)
            }
        }
        print(String(decoding: result?.standardOutputContent ?? [], as: UTF8.self), terminator: "")
    }
}
