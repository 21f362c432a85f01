@testable import DelegateKit  // RegisterPath.withLibffiEntry: both call paths in one process
import DelegateKitFixtures
import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing

/// Calls that never return and closures that wait for their remover: no change of a delegate may hang
/// whatever a thread does inside a closure. C threads of the fixtures leave callbacks every way C allows
/// (pthread_exit, pthread_cancel, longjmp to a setjmp site, fork), and closures block on what their
/// remover does next. Each scenario runs in a child process (an exit test) that an alarm kills after a
/// minute, so that a hang fails the test instead of stopping CI; each runs on both call paths.
@Suite struct LeavingCallsTests {
    // Each scenario of `LeavingScenarios` in a child process with an alarm, on both call paths: an exit
    // test apiece, since an exit test can take no argument into its child before Swift 6.3. A failed check
    // prints why and ends the child normally (an exit test that fails hands back no output); a hang or a
    // crash ends it otherwise.

    @Test func aThreadThatExitsInsideAClosureBlocksNoChange() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aThreadThatExitsInsideAClosureBlocksNoChange)
        }, echo: true)
    }

    @Test(.disabled(if: underThreadSanitizer, "ThreadSanitizer cannot follow pthread_cancel"))
    func aThreadCancelledInsideAClosureBlocksNoChange() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aThreadCancelledInsideAClosureBlocksNoChange)
        }, echo: true)
    }

    @Test func aJumpOnThisThreadReleasesAtTheNextChange() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aJumpOnThisThreadReleasesAtTheNextChange)
        }, echo: true)
    }

    /// Telling that another thread idles above a call it jumped out of takes reading its stack
    /// (`process_vm_readv`) and where it is blocked (`/proc/self/task/TID/syscall`). qemu-user, which runs
    /// the aarch64 suite in CI, answers the first with ENOSYS and shows the host thread's state in the
    /// second: the removal then cannot tell, and keeps waiting as it must.
    @Test(.enabled(if: fx_process_vm_readv_works(), "process_vm_readv does not work here (qemu-user)"))
    func aJumpOnAnIdlePoolThreadBlocksNoChange() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aJumpOnAnIdlePoolThreadBlocksNoChange)
        }, echo: true)
    }

    @Test func manyJumpsOnAThreadThatExitsBlockNothingElse() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.manyJumpsOnAThreadThatExitsBlockNothingElse)
        }, echo: true)
    }

    @Test func aMillionJumpsKeepMemoryFlat() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aMillionJumpsKeepMemoryFlat)
        }, echo: true)
    }

    @Test func deepNestingDefersAndThenReleases() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.deepNestingDefersAndThenReleases)
        }, echo: true)
    }

    @Test func otherChangesAndADelegateDroppedFromInside() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.otherChangesAndADelegateDroppedFromInside)
        }, echo: true)
    }

    @Test func aDelegateDroppedWhileAnotherThreadRunsIt() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aDelegateDroppedWhileAnotherThreadRunsIt)
        }, echo: true)
    }

    @Test func aForkedChildChangesWhatAnotherThreadWasInside() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aForkedChildChangesWhatAnotherThreadWasInside)
        }, echo: true)
    }

    @Test func aClosureWaitingForItsRemoverDoesNotDeadlock() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.aClosureWaitingForItsRemoverDoesNotDeadlock)
        }, echo: true)
    }

    @Test func waitingRefusesTheCallersOwnCallAndTimesOut() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(LeavingScenarios.waitingRefusesTheCallersOwnCallAndTimesOut)
        }, echo: true)
    }

    // MARK: next after its slot was emptied

    @Test(arguments: [false, true])
    func nextNeverRunsWhatWasRemoved(libffi: Bool) throws {
        func scenario() throws {
            let baseRuns = Counter()
            let delegate = DynamicDelegate(protocol: pluginProtocol)
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                baseRuns.increment()
                return x + 1
            }
            try delegate.override("transform") { [unowned delegate] (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                delegate.removeImplementation(for: "transform")  // the whole stack, this layer included
                #expect(!next.isAvailable)
                return next(context, x) + 1000
            }
            #expect(callSlot(delegate, 5) == 1000)  // next gave the default value, 0
            #expect(baseRuns.value == 0)
            #expect(!delegate.responds(to: "transform"))

            // Only the layer below removed: next skips it and reaches the original below that.
            try delegate.implement("transform", key: "bottom") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x * 10 }
            try delegate.implement("transform", key: "middle") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                baseRuns.increment()
                return x
            }
            try delegate.override("transform") { [unowned delegate] (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                delegate.removeImplementation(for: "transform", key: "middle")
                return next(context, x)
            }
            #expect(callSlot(delegate, 5) == 50)
            #expect(baseRuns.value == 0)
        }
        if libffi { try RegisterPath.withLibffiEntry(scenario) } else { try scenario() }
    }
}

/// The scenarios the child processes run, once per call path.
enum LeavingScenarios {
    /// What the forked child does: change the slot another thread of the parent was inside, call it.
    static let forkedChild: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { context in
        let delegate = Unmanaged<DynamicDelegate>.fromOpaque(context!).takeUnretainedValue()
        delegate.removeImplementation(for: "transform")
        guard (try? delegate.waitForRemovedCalls(timeout: .seconds(5))) == true else { return 3 }
        guard (try? delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x * 3 }) != nil else { return 4 }
        return callSlot(delegate, 5) == 15 ? 0 : 5
    }

    static func otherChangesAndADelegateDroppedFromInside(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let target = DynamicDelegate(protocol: pluginProtocol)
        try target.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x * 2 }
        try delegate.setPolicy(.stable, for: "transform")  // every call goes through the slot's plan
        let (caller, go) = try callerBlockedInside(delegate)
        try promptly("a policy change") { try delegate.setPolicy(.nullWhenUnimplemented, for: "transform") }
        try promptly("a forwarding change") { try delegate.setForwardingTarget(.delegate(target)) }
        try promptly("an observation") { try delegate.observe("transform", .before) { (_: UnsafeMutableRawPointer?, _: Int64) in }.cancel() }
        promptly("the removal") { delegate.removeImplementation(for: "transform") }
        check(callSlot(delegate, 4) == 8, "the forwarding target does not serve the emptied slot")
        go.open()
        var result: Int64 = 0
        check(fx_caller_join(caller, &result) == 1 && result == 5, "the blocked call did not finish with its closure")
        check(try delegate.waitForRemovedCalls(timeout: .seconds(10)), "the finished call still counts")

        // The delegate's only owner is dropped by its own closure, during the call: the call ends safely
        // and the closure goes with it.
        let alive = Counter()
        final class Owner: @unchecked Sendable { var delegate: DynamicDelegate? }  // touched by one thread at a time
        let owner = Owner()
        var called = false
        do {
            let doomed = DynamicDelegate(protocol: pluginProtocol)
            try doomed.implement("transform") { [captured = Captured(alive, value: 7), owner] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                owner.delegate = nil  // the last reference: the delegate goes away here
                return x + captured.value  // what it captured is still there
            }
            owner.delegate = doomed
        }
        let plugin = table(owner.delegate!)
        check(fx_plugin_transform(plugin, nil, 1, &called) == 8, "the call failed")
        check(owner.delegate == nil && alive.value == 0, "the closure outlived its call (path \(libffi))")
    }

    /// A delegate whose last reference goes on this thread while a C thread runs its closure: that call
    /// ends with its closure and stub, which go once it returns (a delegate going away with no call in
    /// progress anywhere asks nothing object by object).
    static func aDelegateDroppedWhileAnotherThreadRunsIt(libffi: Bool) throws {
        let alive = Counter()
        let entered = Gate(), go = Gate()
        var caller: OpaquePointer?
        var implementation: Probe?
        do {
            let dropped = DynamicDelegate(protocol: pluginProtocol)
            try dropped.implement("transform") { [captured = Captured(alive, value: 3)] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                entered.open()
                go.pass()
                return x + captured.value  // what it captured is still there
            }
            implementation = Probe(dropped)
            caller = fx_caller_start(table(dropped), 5)
            entered.pass()
        }  // the last reference to the delegate goes here, with the call inside its closure
        check(!implementation!.isReleased && alive.value == 1, "the implementation went while a call ran it (path \(libffi))")
        go.open()
        var result: Int64 = 0
        check(fx_caller_join(caller!, &result) == 1 && result == 8, "the call did not finish with its closure")
        check(implementation!.isReleased && alive.value == 0, "the implementation outlived its call (path \(libffi))")
    }

    static func deepNestingDefersAndThenReleases(libffi: Bool) throws {
        let alive = Counter()
        let other = DynamicDelegate(protocol: pluginProtocol)
        let recursive = DynamicDelegate(protocol: pluginProtocol)
        let depth = Atomic<Int>(0)
        let jumpAtTheBottom = Atomic<Bool>(false)
        try recursive.implement("transform") { [unowned recursive] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
            guard x > 0 else {
                depth.store(depth.load(ordering: .relaxed) + 1, ordering: .relaxed)
                if jumpAtTheBottom.load(ordering: .relaxed) { fx_jump_back(9) }
                // At the bottom, 24 calls deep: a removal of another delegate's closure returns at once...
                other.removeImplementation(for: "transform")
                return 0
            }
            return callSlot(recursive, x - 1) + 1
        }
        try other.implement("transform") { [captured = Captured(alive, value: 1)] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
            x + captured.value
        }
        let closure = Probe(other)
        check(callSlot(recursive, 23) == 23, "the nested calls failed")
        // ...and what it removed goes once the nesting unwound.
        check(try other.waitForRemovedCalls(timeout: .seconds(10)), "the unwound calls still count")
        check(closure.isReleased && alive.value == 0, "the closure removed during deep nesting was kept (path \(libffi))")

        // A jump from the bottom to a site above the nesting: later calls work, and releases are prompt.
        jumpAtTheBottom.store(true, ordering: .relaxed)
        check(fx_call_at_setjmp(table(recursive), 23, nil) == 9, "no jump back")
        jumpAtTheBottom.store(false, ordering: .relaxed)
        check(callSlot(recursive, 3) == 3, "calls after the jump fail")
        try other.implement("transform") { [captured = Captured(alive, value: 2)] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
            x + captured.value
        }
        other.removeImplementation(for: "transform")
        check(alive.value == 0, "a removal after the jump from deep nesting kept its closure (path \(libffi))")
        check(depth.load(ordering: .relaxed) == 3, "the bottom was reached \(depth.load(ordering: .relaxed)) times")
    }

    static func aThreadCancelledInsideAClosureBlocksNoChange(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let entered = Gate()
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
            entered.open()
            while true { pause() }  // a cancellation point, where the cancellation takes it
        }
        let closure = Probe(delegate)
        let caller = fx_caller_start(table(delegate), 5)!
        entered.pass()
        fx_caller_cancel(caller)
        check(fx_caller_join(caller, nil) == 0, "the call returned")
        try promptly("the replacement") {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x * 2 }
        }
        check(try delegate.waitForRemovedCalls(timeout: .seconds(10)), "the cancelled thread still counts as running")
        check(closure.isReleased, "the closure outlived its cancelled thread (path \(libffi))")
        check(callSlot(delegate, 4) == 8, "later calls fail")
    }

    static func aThreadThatExitsInsideAClosureBlocksNoChange(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let entered = Gate(), go = Gate()
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, _: Int64) -> Int64 in
            entered.open()
            go.pass()
            pthread_exit(nil)
        }
        let closure = Probe(delegate)
        let caller = fx_caller_start(table(delegate), 5)!
        entered.pass()
        // Removed while the thread is inside: returns at once, released when the thread is gone.
        promptly("the removal") { delegate.removeImplementation(for: "transform") }
        go.open()
        check(fx_caller_join(caller, nil) == 0, "the call returned")
        check(try delegate.waitForRemovedCalls(timeout: .seconds(10)), "the exited thread still counts as running")
        check(closure.isReleased, "the closure outlived its thread (path \(libffi))")

        // Exited inside, then replaced: the replacement finds nothing running.
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, _: Int64) -> Int64 in pthread_exit(nil) }
        let exited = Probe(delegate)
        check(fx_caller_join(fx_caller_start(table(delegate), 5)!, nil) == 0, "the call returned")
        try promptly("the replacement") {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + 1 }
        }
        check(exited.isReleased, "the replaced closure was kept")
        var result: Int64 = 0
        check(fx_caller_join(fx_caller_start(table(delegate), 5)!, &result) == 1 && result == 6, "later calls fail")
        check(callSlot(delegate, 9) == 10, "later calls on this thread fail")
    }

    static func aJumpOnThisThreadReleasesAtTheNextChange(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, _: Int64) -> Int64 in fx_jump_back(7) }
        let closure = Probe(delegate)
        for _ in 0..<20 { check(fx_call_at_setjmp(table(delegate), 1, nil) == 7, "no jump back") }
        // Removed from the function that called the setjmp site, as a decoder that failed would: the
        // removal's frame is where the jumped-out call's was, so the call is known to be gone.
        delegate.removeImplementation(for: "transform")
        check(closure.isReleased, "the closure that jumped was kept (path \(libffi))")
        // A change of the same slot from another thread returns too.
        let done = Gate()
        Thread.detachNewThread {
            _ = try? delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + 100 }
            done.open()
        }
        done.pass()
        var result: Int64 = 0
        check(fx_call_at_setjmp(table(delegate), 1, &result) == 0 && result == 101, "later calls fail")
        check(callSlot(delegate, 2) == 102, "later calls fail")
    }

    static func aJumpOnAnIdlePoolThreadBlocksNoChange(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, _: Int64) -> Int64 in fx_jump_back(3) }
        let closure = Probe(delegate)
        let pool = fx_pool_thread_start(table(delegate))!
        check(fx_pool_thread_call(pool, 1) == 1, "no jump back")
        // The pool thread idles, blocked in the kernel, with the call it jumped out of still in its record:
        // it is blocked above that call's frame, so a removal from this thread releases the closure at once.
        promptly("the removal") { delegate.removeImplementation(for: "transform") }
        check(try delegate.waitForRemovedCalls(timeout: .seconds(10)), "the idle thread's jump still counts")
        check(closure.isReleased, "the closure that jumped was kept (path \(libffi))")
        // Later calls on the pool thread work.
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
        check(fx_pool_thread_call(pool, 2) == 1, "the pool thread's later call jumped")
        fx_pool_thread_stop(pool)
    }

    static func manyJumpsOnAThreadThatExitsBlockNothingElse(libffi: Bool) throws {
        let alive = Counter()
        let jumper = DynamicDelegate(protocol: pluginProtocol)
        try jumper.implement("transform") { (_: UnsafeMutableRawPointer?, _: Int64) -> Int64 in fx_jump_back(1) }
        let pool = fx_pool_thread_start(table(jumper))!
        for round in 1...40 { check(fx_pool_thread_call(pool, Int64(round)) == round, "no jump back") }
        // The jumped-out calls are gone with the thread (its record is cleared at exit).
        fx_pool_thread_stop(pool)
        // Another delegate, changed from another thread while C threads call it: releases at once.
        let other = DynamicDelegate(protocol: pluginProtocol)
        let done = Gate()
        Thread.detachNewThread {
            for round in Int64(0)..<50 {
                _ = try? other.implement("transform") { [captured = Captured(alive, value: round)] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                    x + captured.value
                }
                _ = callSlot(other, 1)
                other.removeImplementation(for: "transform")
                if alive.value != 0 { fail("round \(round): removal of another delegate kept its closure (path \(libffi))") }
            }
            done.open()
        }
        done.pass()
        jumper.removeImplementation(for: "transform")
        check(try jumper.waitForRemovedCalls(timeout: .seconds(10)), "an exited thread's jumps still count")
    }

    static func aMillionJumpsKeepMemoryFlat(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, _: Int64) -> Int64 in fx_jump_back(1) }
        let closure = Probe(delegate)
        let jumps = Int64(1_000_000 / MemoryChurnTests.scale)
        check(fx_jump_many(table(delegate), 20_000) == 20_000, "no jump back")
        let start = residentBytes()
        check(fx_jump_many(table(delegate), jumps) == jumps, "no jump back")
        let growth = residentBytes() - start
        print("\(jumps) jumps on the \(libffi ? "libffi" : "register") path: resident memory grew by \(growth >> 10) KiB")
        check(growth < 1 << 20, "memory grew by \(growth) bytes")
        delegate.removeImplementation(for: "transform")
        check(closure.isReleased, "the closure that jumped was kept")
    }

    static func aForkedChildChangesWhatAnotherThreadWasInside(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let (caller, go) = try callerBlockedInside(delegate)
        let status = fx_fork_and_run(LeavingScenarios.forkedChild, Unmanaged.passUnretained(delegate).toOpaque(), 20)
        check(status == 0, "the forked child ended with \(status) (path \(libffi))")

        // A fork while another thread is in the middle of a change (inside the delegate's lock): the fork
        // waits for it, so the child finds the lock free.
        let inside = Gate(), forking = Gate(), done = Gate()
        Thread.detachNewThread {
            delegate.slots.state.withLock { _ in
                inside.open()
                forking.pass()
                usleep(100_000)  // still inside while the fork is on its way
            }
            done.open()
        }
        inside.pass()
        forking.open()
        let second = fx_fork_and_run(LeavingScenarios.forkedChild, Unmanaged.passUnretained(delegate).toOpaque(), 20)
        check(second == 0, "the child forked during a change ended with \(second) (path \(libffi))")
        done.pass()
        go.open()
        var result: Int64 = 0
        check(fx_caller_join(caller, &result) == 1 && result == 5, "the parent's call did not finish")
    }

    static func aClosureWaitingForItsRemoverDoesNotDeadlock(libffi: Bool) throws {
        let alive = Counter()
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        // A semaphore the remover signals only after the removal returned.
        let entered = Gate(), afterRemoval = Gate()
        try delegate.implement("transform") { [captured = Captured(alive, value: 1)] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
            entered.open()
            afterRemoval.pass()
            return x + captured.value
        }
        var caller = fx_caller_start(table(delegate), 5)!
        entered.pass()
        promptly("the removal") { delegate.removeImplementation(for: "transform") }
        check(try !delegate.waitForRemovedCalls(timeout: .milliseconds(50)), "the wait did not time out")
        check(alive.value == 1, "released while still running")
        afterRemoval.open()
        var result: Int64 = 0
        check(fx_caller_join(caller, &result) == 1 && result == 6, "the call did not finish with its closure")
        check(try delegate.waitForRemovedCalls(timeout: .seconds(10)), "the finished call still counts")
        check(alive.value == 0, "not released when the last call returned (path \(libffi))")

        // A lock the remover holds while it removes.
        let lock = Locked(0)
        let holding = Gate(), release = Gate()
        let remover = Gate()
        try delegate.implement("transform") { [captured = Captured(alive, value: 2)] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
            entered.open()
            return lock.withLock { _ in x + captured.value }
        }
        Thread.detachNewThread {
            lock.withLock { _ in
                holding.open()
                release.pass()
                promptly("the removal under the lock") { delegate.removeImplementation(for: "transform") }
            }
            remover.open()
        }
        holding.pass()
        caller = fx_caller_start(table(delegate), 5)!
        entered.pass()
        release.open()
        remover.pass()
        check(fx_caller_join(caller, &result) == 1 && result == 7, "the call did not finish")
        check(try delegate.waitForRemovedCalls(timeout: .seconds(10)) && alive.value == 0, "not released")

        // An observer that synchronously waits for a queue whose work is cancelling it.
        let queue = DispatchQueue(label: "canceller")
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
        let token = try delegate.observe("transform", .before) { [captured = Captured(alive, value: 3)] (_: UnsafeMutableRawPointer?, _: Int64) in
            _ = captured.value
            entered.open()
            queue.sync {}
        }
        queue.sync {
            caller = fx_caller_start(table(delegate), 5)!
            entered.pass()
            promptly("cancel") { token.cancel() }
        }
        check(fx_caller_join(caller, &result) == 1 && result == 5, "the call did not finish")
        check(try delegate.waitForRemovedCalls(timeout: .seconds(10)) && alive.value == 0, "the observer was kept")
    }

    static func waitingRefusesTheCallersOwnCallAndTimesOut(libffi: Bool) throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let refusal = Locked<DelegateError?>(nil)
        try delegate.implement("transform") { [unowned delegate] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
            delegate.removeImplementation(for: "transform")
            do {
                _ = try delegate.waitForRemovedCalls(timeout: .seconds(1))
            } catch {
                refusal.withLock { $0 = error as? DelegateError }
            }
            return x
        }
        check(promptly("a wait inside the call") { callSlot(delegate, 3) } == 3, "the call failed")
        check(refusal.withLock { $0 } == .waitingForOwnCall(method: "transform", protocol: "fx_plugin"),
              "the wait inside the removed closure was not refused: \(String(describing: refusal.withLock { $0 }))")
        check(try delegate.waitForRemovedCalls(timeout: .zero), "nothing runs, yet the wait failed")
    }
}

// MARK: The child processes

private typealias Captured = RemovalReleaseTests.Captured

/// What an exit test running `inChild` must hand back: output without "FAILED", ending with "done".
/// `echo` prints the child's output (its measurements) into the parent's.
func expectFinished(_ result: ExitTest.Result?, echo: Bool = false, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
    let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
    if echo { print(output, terminator: "") }
    #expect(!output.contains("FAILED"), "\(output)", sourceLocation: sourceLocation)
    #expect(output.hasSuffix("done\n"), "the child did not finish: \(output)", sourceLocation: sourceLocation)
}

/// The child's watchdog, then `scenario` on the register path and on libffi's; a failed check prints
/// and exits with 1.
func inChild(_ scenario: (_ libffi: Bool) throws -> Void) {
    startWatchdog()
    do {
        try scenario(false)
        try RegisterPath.withLibffiEntry { try scenario(true) }
    } catch {
        fail("threw \(error)")
    }
    // Without LeakSanitizer's check at exit: the frames a jump, an exit or a cancellation skipped never
    // released what they held (Swift's unoptimized code keeps every captured reference a closure uses
    // for its whole frame), which is the program's, not DelegateKit's. What DelegateKit itself lets go is
    // checked above (Probe).
    print("done")
    fflush(nil)
    _exit(0)
}

/// A child's watchdog: after `seconds` SIGALRM's default action ends the process, whichever thread it
/// reaches.
func startWatchdog(seconds: UInt32 = 60) {
    var alarmOnly = sigset_t()
    sigemptyset(&alarmOnly)
    sigaddset(&alarmOnly, SIGALRM)
    pthread_sigmask(SIG_UNBLOCK, &alarmOnly, nil)
    signal(SIGALRM, SIG_DFL)
    alarm(seconds)
}

/// Whether DelegateKit still holds the closure of a slot's top implementation: weakly, the object it
/// keeps the user's closure in (a plain implementation itself, an override's thunk).
final class Probe {
    private weak var closure: AnyObject?

    init(_ delegate: DynamicDelegate, method: String = "transform") {
        closure = delegate.slots.state.withLock { state -> AnyObject? in
            guard let index = try? delegate.descriptor.methodIndex(of: method), let top = state.slots[index].entries.last else { return nil }
            return top.override ?? top
        }
        if closure == nil { fail("no implementation to probe") }
    }

    var isReleased: Bool { closure == nil }
}

/// Ends the child after a failed check, saying why on standard output for the parent to report (see
/// `expectFinished`).
func fail(_ message: String) -> Never {
    print("FAILED: \(message)")
    fflush(nil)
    _exit(0)
}

func check(_ condition: Bool, _ message: @autoclosure () -> String, line: Int = #line) {
    if !condition { fail("line \(line): \(message())") }
}

/// Whether ThreadSanitizer instruments this run (`.ci/run` says so): it cannot follow pthread_cancel.
var underThreadSanitizer: Bool { ProcessInfo.processInfo.environment["DELEGATEKIT_SANITIZER"] == "thread" }

/// Runs `body` and checks it took less than `seconds`: a change returns promptly.
@discardableResult
func promptly<T>(_ what: String, within seconds: Double = 5, _ body: () throws -> T) rethrows -> T {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = try body()
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    check(elapsed < seconds, "\(what) took \(elapsed) s")
    return result
}

func table(_ delegate: DynamicDelegate) -> UnsafePointer<fx_plugin> {
    UnsafePointer(delegate.table.assumingMemoryBound(to: fx_plugin.self))
}

func callSlot(_ delegate: DynamicDelegate, _ value: Int64) -> Int64 {
    var called = false
    return fx_plugin_transform(table(delegate), nil, value, &called)
}

/// Implements `transform` with a closure that returns its argument once `go` opens, and has a C thread of
/// the fixture call it with 5: returns once that thread is inside the closure.
func callerBlockedInside(_ delegate: DynamicDelegate) throws -> (caller: OpaquePointer, go: Gate) {
    let entered = Gate(), go = Gate()
    try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
        entered.open()
        go.pass()
        return x
    }
    let caller = fx_caller_start(table(delegate), 5)!
    entered.pass()
    return (caller, go)
}

/// A semaphore a C thread can block on (pthread-based, so ThreadSanitizer follows it).
final class Gate: @unchecked Sendable {  // The semaphore is thread-safe.
    private let semaphore = DispatchSemaphore(value: 0)
    func open() { semaphore.signal() }
    func pass() { semaphore.wait() }
}

