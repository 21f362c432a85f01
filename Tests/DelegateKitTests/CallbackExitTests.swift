@testable import DelegateKit  // RegisterPath.withLibffiEntry: both call paths in one process
import DelegateKitDocumentationExamples
import DelegateKitFixtures
import Foundation
import Glibc
import Synchronization
import Testing

/// The objects the closures below capture and make.
private let captures = Census()

private typealias Transform = @convention(c) (UnsafeMutableRawPointer?, Int64) -> Int64

/// Closures that leave the C call they run in by throwing a ``CallbackExit``: C's setjmp sites (the
/// fixture's, as libpng's and Lua's users write them) and DelegateKit's ``JumpTarget``, reached by a C
/// function that never returns or by a jump. Every capture is released, on both call paths, in the debug
/// build the tests run in, where a jump from inside the closure leaks what the closure touched.
@Suite(.serialized) struct CallbackExitTests {
    /// `fx_jump_back`, which longjmps to the calling thread's innermost `fx_call_at_setjmp`.
    private static func jumpBack() throws -> CFunction {
        try CFunction(address: fixture("fx_jump_back"), declaration: "void (int)", name: "fx_jump_back")
    }

    /// Calls `closure` as a plugin's transform at the fixture's setjmp site: the code it jumped with, or 0
    /// and the result.
    private static func callAtSetjmp(_ closure: CClosure, _ value: Int64) -> (code: Int32, result: Int64) {
        var plugin = fx_plugin()
        plugin.transform = try! closure.functionPointer(as: Transform.self)  // the transform's own type
        var result: Int64 = 0
        let code = fx_call_at_setjmp(&plugin, value, &result)
        return (code, result)
    }

    /// Runs `body` on each call path, checking afterwards that it left no capture alive.
    private static func onBothPaths(_ body: () throws -> Void) throws {
        for libffi in [false, true] {
            let before = captures.alive
            if libffi { try RegisterPath.withLibffiEntry(body) } else { try body() }
            #expect(captures.alive == before, "captures left alive (libffi path: \(libffi))")
        }
    }

    @Test func aClosureLeavesByAFunctionThatNeverReturns() throws {
        let jumpBack = try Self.jumpBack()
        try Self.onBothPaths {
            let captured = captures.member(40)
            let closure = try CClosure { (_: UnsafeMutableRawPointer?, value: Int64) throws -> Int64 in
                if value < 0 { throw try CallbackExit.call(jumpBack, [.signed(-value)]) }
                return captured.value + value
            }
            #expect(Self.callAtSetjmp(closure, 2) == (0, 42))
            #expect(Self.callAtSetjmp(closure, -7) == (7, 0))
            #expect(Self.callAtSetjmp(closure, 3) == (0, 43))
        }
    }

    @Test func tenThousandExitsReleaseEveryCapture() throws {
        let jumpBack = try Self.jumpBack()
        try Self.onBothPaths {
            var jumped = 0
            for index in 0..<5_000 {
                // A closure per call, capturing an object it touches before it leaves.
                let captured = captures.member(Int64(index))
                let closure = try CClosure { (_: UnsafeMutableRawPointer?, value: Int64) throws -> Int64 in
                    let seen = [captured, captures.member(value)]  // allocated in the frame the exit unwinds
                    if seen[0].value % 2 == 1 { throw try CallbackExit.call(jumpBack, [.signed(1)]) }
                    return seen[1].value
                }
                if Self.callAtSetjmp(closure, Int64(index)).code != 0 { jumped += 1 }
                if Self.callAtSetjmp(closure, Int64(index)).code != 0 { jumped += 1 }
            }
            #expect(jumped == 5_000)
        }
    }

    @Test func aClosureLeavesByAJumpToATarget() throws {
        typealias PluginTransform = @convention(c) (UnsafePointer<fx_plugin>?, UnsafeMutableRawPointer?, Int64, UnsafeMutablePointer<Bool>?) -> Int64
        let transform = try CFunction(
            address: unsafeBitCast(fx_plugin_transform as PluginTransform, to: UnsafeRawPointer.self),
            declaration: "int64_t (void *, void *, int64_t, void *)", name: "fx_plugin_transform")
        try Self.onBothPaths {
            let target = JumpTarget()
            let captured = captures.member(5)
            let closure = try CClosure { (_: UnsafeMutableRawPointer?, value: Int64) throws -> Int64 in
                if value == captured.value { throw CallbackExit.jump(to: target, value: 9) }
                return value * 2
            }
            var plugin = fx_plugin()
            plugin.transform = try! closure.functionPointer(as: Transform.self)  // the transform's own type
            var called = false
            try withUnsafeMutablePointer(to: &plugin) { plugin in
                try withUnsafeMutablePointer(to: &called) { called in
                    let returned = try transform.call(
                        catchingJumpsTo: target, UnsafeRawPointer(plugin), UnsafeMutableRawPointer?.none, Int64(4), called,
                        returning: Int64.self)
                    #expect(returned == .returned(8))
                    let jumped = try transform.call(
                        catchingJumpsTo: target, UnsafeRawPointer(plugin), UnsafeMutableRawPointer?.none, Int64(5), called,
                        returning: Int64.self)
                    #expect(jumped == .jumped(9))
                }
            }
        }
    }

    @Test func aClosureOfARunTimeSignatureLeaves() throws {
        let jumpBack = try Self.jumpBack()
        let signature = try CSignature(parsing: "int64_t (void *, int64_t)")
        try Self.onBothPaths {
            let captured = captures.member(1)
            let closure = try CClosure(signature: signature) { (invocation: CInvocation) throws in
                let value: Int64 = invocation.argument(1)
                if value > 100 { throw try CallbackExit.call(jumpBack, [.signed(3)]) }
                invocation.setReturnValue(value + captured.value)
            }
            #expect(Self.callAtSetjmp(closure, 41) == (0, 42))
            #expect(Self.callAtSetjmp(closure, 101) == (3, 0))
        }
    }

    /// A slot's implementation leaves through each of a slot's entries: the stub of a lone
    /// implementation, and the plan cell's dispatcher once an observer makes the call a plan.
    @Test func aSlotLeavesThroughEachEntry() throws {
        let jumpBack = try Self.jumpBack()
        try Self.onBothPaths {
            let delegate = DynamicDelegate(protocol: pluginProtocol)
            let alive = captures.alive
            try delegate.implement("transform") { [captured = captures.member(40)] (_: UnsafeMutableRawPointer?, value: Int64) throws -> Int64 in
                if value < 0 { throw try CallbackExit.call(jumpBack, [.signed(-value)]) }
                return captured.value + value
            }
            var result: Int64 = 0
            #expect(fx_call_at_setjmp(table(delegate), 2, &result) == 0 && result == 42)
            #expect(fx_call_at_setjmp(table(delegate), -7, &result) == 7)
            let observed = Atomic<Int>(0)
            let token = try delegate.observe("transform", .after) { (_: UnsafeMutableRawPointer?, _: Int64) in
                observed.add(1, ordering: .relaxed)
            }
            #expect(fx_call_at_setjmp(table(delegate), -5, &result) == 5)
            #expect(fx_call_at_setjmp(table(delegate), 3, &result) == 0 && result == 43)
            #expect(observed.load(ordering: .relaxed) == 2, "the observer runs after an implementation that left")
            token.cancel()
            // The exits left no call running: another thread's removal lets go of the closure at once.
            let removed = Atomic<Bool>(false)
            let thread = Thread { delegate.removeImplementation(for: "transform"); removed.store(true, ordering: .releasing) }
            thread.start()
            while !removed.load(ordering: .acquiring) { usleep(1_000) }
            #expect(captures.alive == alive, "the removal kept the closure")
        }
    }

    /// 5,000 implementations per path, each capturing an object, half of them leaving: every capture is
    /// released with the delegate.
    @Test func tenThousandSlotExitsReleaseEveryCapture() throws {
        let jumpBack = try Self.jumpBack()
        try Self.onBothPaths {
            let delegate = DynamicDelegate(protocol: pluginProtocol)
            var jumped = 0
            for index in 0..<5_000 {
                let captured = captures.member(Int64(index))
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) throws -> Int64 in
                    let seen = [captured, captures.member(value)]
                    if seen[0].value % 2 == 1 { throw try CallbackExit.call(jumpBack, [.signed(1)]) }
                    return seen[1].value
                }
                if fx_call_at_setjmp(table(delegate), Int64(index), nil) != 0 { jumped += 1 }
                if fx_call_at_setjmp(table(delegate), Int64(index), nil) != 0 { jumped += 1 }
            }
            #expect(jumped == 5_000)
            delegate.removeImplementation(for: "transform")
            #expect(try delegate.waitForRemovedCalls(timeout: .zero))
        }
    }

    /// The one way to handle errors in an implementation: a CallbackExit leaves, any other error the
    /// closure catches itself and answers C with a value of its own.
    @Test func anImplementationThatCatchesItsOwnErrorsLeavesByAnExit() throws {
        let jumpBack = try Self.jumpBack()
        try Self.onBothPaths {
            let delegate = DynamicDelegate(protocol: pluginProtocol)
            let heard = Mutex<[String]>([])
            struct Refused: Error {}
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) throws -> Int64 in
                do {
                    if value == 1 { throw Refused() }
                } catch {
                    heard.withLock { $0.append("transform: \(error)") }
                    return -1
                }
                if value == 2 { throw try CallbackExit.call(jumpBack, [.signed(4)]) }
                return value
            }
            var result: Int64 = 0
            #expect(fx_call_at_setjmp(table(delegate), 1, &result) == 0 && result == -1)
            #expect(fx_call_at_setjmp(table(delegate), 2, &result) == 4)
            #expect(fx_call_at_setjmp(table(delegate), 3, &result) == 0 && result == 3)
            #expect(heard.withLock { $0 } == ["transform: Refused()"])
        }
    }

    // ThreadSanitizer intercepts qsort, and a jump out of the comparator skips the end of its interceptor:
    // in CI its thread then "finished with ignores enabled".
    @Test(.disabled(if: underThreadSanitizer, "ThreadSanitizer's qsort interceptor cannot follow a jump out of the comparator"))
    func theReadmeSortLeavesQsortAtANaN() throws {
        try Self.onBothPaths {
            let sorted = try sortedUnlessNaN([3, 1, 2])
            let stopped = try sortedUnlessNaN([3, .nan, 2, 5])
            #expect(sorted == [1, 2, 3])
            #expect(stopped == nil)
        }
    }

    @Test func anExitThatDoesNotFitThrows() throws {
        let jumpBack = try Self.jumpBack()
        #expect(throws: DelegateError.valueMismatch(function: "'fx_jump_back'", argument: 1, type: .int32, value: "4294967296")) {
            _ = try CallbackExit.call(jumpBack, [.signed(1 << 32)])
        }
        #expect(throws: DelegateError.self) { _ = try CallbackExit.call(jumpBack, []) }
        // Typed arguments are checked against the signature as a typed call's are.
        let mismatch = #expect(throws: DelegateError.self) { _ = try CallbackExit.call(jumpBack, Int64(1)) }
        guard case .callMismatch(let function, _, _, _) = mismatch else {
            Issue.record("not a call mismatch: \(String(describing: mismatch))")
            return
        }
        #expect(function == "'fx_jump_back'")
        _ = try CallbackExit.call(jumpBack, Int32(1))
    }

    @Test func anotherErrorStopsTheProgramNamingIt() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct Refused: Error {}
            let closure = try CClosure { (_: UnsafeMutableRawPointer?, _: Int64) throws -> Int64 in throw Refused() }
            _ = CallbackExitTests.callAtSetjmp(closure, 1)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("DelegateKit: a closure C called threw "))
        #expect(stderr.contains("Refused(); C cannot be told of an error, so a closure that C calls may throw only a CallbackExit"))
        #expect(stderr.contains("catch any other error inside the closure and return the value C should receive"))
    }

    @Test func aJumpWithNoCallCatchingItStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let target = JumpTarget()
            let closure = try CClosure { (_: UnsafeMutableRawPointer?, _: Int64) throws -> Int64 in
                throw CallbackExit.jump(to: target)
            }
            _ = CallbackExitTests.callAtSetjmp(closure, 1)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("a closure threw CallbackExit.jump(to:) with no call catching jumps to that JumpTarget"))
    }
}
