@testable import DelegateKit  // Locked
import DelegateKitFixtures
import Foundation
import Synchronization
import Testing

/// A C pointer handed between a test and its closures, which may run on C's threads.
final class SharedPointer: Sendable {
    private let bits = Atomic<UInt>(0)
    var value: OpaquePointer? {
        get { OpaquePointer(bitPattern: bits.load(ordering: .acquiring)) }
        set { bits.store(UInt(bitPattern: Int(bitPattern: newValue)), ordering: .releasing) }
    }
}

/// The forms GLib's callbacks take, driven by C fixtures of our own (callbacks.c): one-shots that release
/// as they return, awaiting a C completion, calls as `AsyncStream`s, erased function pointer types, and
/// tables C owns, filled in place. GLibTests drives the same forms from GLib itself.
@Suite(.serialized) struct CallbackFormsTests {
    // MARK: One-shots

    @Test func aOneShotReleasesWhatItCapturedAsItsCallReturns() throws {
        weak var weakTracked: Tracked?
        let operation = SharedPointer()
        do {
            let tracked = Tracked(5)
            weakTracked = tracked
            let done = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, status: Int32) in
                #expect(status == 9 && tracked.value == 5)
            }
            operation.value = fx_cancellable_start(try done.functionPointer(), nil)
        }
        #expect(weakTracked != nil)  // C has not called yet
        fx_cancellable_complete(operation.value, 9)
        fx_cancellable_join(operation.value)  // C's thread has returned from the call and ended
        #expect(weakTracked == nil)  // with no other one-shot made since
    }

    @Test func oneShotsCalledFromFourThreadsEachReleaseTheirCaptures() throws {
        final class Box: Sendable {}
        let weakBoxes = Locked<[Weak]>([])
        let runs = Counter()
        var operations: [OpaquePointer?] = []
        for _ in 0..<4 {
            let box = Box()
            weakBoxes.withLock { $0.append(Weak(box)) }
            let done = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, _: Int32) in
                withExtendedLifetime(box) { runs.increment() }
            }
            operations.append(fx_cancellable_start(try done.functionPointer(), nil))
        }
        for operation in operations { fx_cancellable_complete(operation, 0) }
        for operation in operations { fx_cancellable_join(operation) }
        #expect(runs.value == 4)
        #expect(weakBoxes.withLock { $0.filter { $0.object != nil }.count } == 0)
    }

    // MARK: Awaiting a C callback

    @Test func awaitingReturnsWhatTheCallbackReceived() async throws {
        weak var weakTracked: Tracked?
        let operation = SharedPointer()
        let tracked = Tracked(100)
        weakTracked = tracked
        let waiting = Task {
            try await withCCallback { callback in
                operation.value = fx_cancellable_start(try callback.functionPointer(), nil)
            } receive: { (_: UnsafeMutableRawPointer?, status: Int32) in
                Int64(status) + tracked.value
            }
        }
        while operation.value == nil { await Task.yield() }
        fx_cancellable_complete(operation.value, 23)
        #expect(try await waiting.value == 123)
        fx_cancellable_join(operation.value)
        _ = consume tracked
        #expect(weakTracked == nil)  // the callback let go of it as C's call returned
    }

    @Test func awaitingACallbackCalledBeforeStartReturns() async throws {
        // C completes on its own thread while `start` is still running.
        let operation = SharedPointer()
        let status = try await withCCallback { callback in
            let started = fx_cancellable_start(try callback.functionPointer(), nil)
            operation.value = started
            fx_cancellable_complete(started, 4)
            usleep(20_000)
        } receive: { (_: UnsafeMutableRawPointer?, status: Int32) in status }
        #expect(status == 4)
        fx_cancellable_join(operation.value)
    }

    @Test func cancellingTheTaskRunsTheCancelActionAndStillAwaitsC() async throws {
        let operation = SharedPointer()
        let cancels = Counter()
        let waiting = Task {
            try await withCCallback(onCancel: {
                cancels.increment()
                fx_cancellable_cancel(operation.value)
            }) { callback in
                operation.value = fx_cancellable_start(try callback.functionPointer(), nil)
            } receive: { (_: UnsafeMutableRawPointer?, status: Int32) in status }
        }
        while operation.value == nil { await Task.yield() }
        waiting.cancel()
        #expect(try await waiting.value == -125)  // C's report of the cancelled operation
        #expect(cancels.value == 1)
        fx_cancellable_join(operation.value)
    }

    @Test func aStartThatThrowsResumesWithItsErrorAndReleasesTheCallback() async throws {
        weak var weakTracked: Tracked?
        let tracked = Tracked(1)
        weakTracked = tracked
        let address = SharedPointer()
        await #expect(throws: Refused(value: 7)) { () async throws in
            try await withCCallback { callback in
                address.value = OpaquePointer(callback.address)
                throw Refused(value: 7)  // C refused the registration
            } receive: { (_: UnsafeMutableRawPointer?, status: Int32) in status + Int32(tracked.value) }
        }
        _ = consume tracked
        #expect(weakTracked == nil)
        // The released code now reports a late call instead of running the closure; nothing calls it here.
        #expect(address.value != nil)
    }

    @Test func aCallbackThatCannotBeMadeResumesWithTheErrorBeforeStart() async throws {
        let started = Counter()
        await #expect(throws: DelegateError.self) {
            try await withCCallback { _ in started.increment() } receive: { (pair: MisstatedPair) in pair.value }
        }
        #expect(started.value == 0)
    }

    // MARK: Calls as streams

    @Test func aClosuresCallsComeOutOfAStreamThatEndsWithTheClosure() async throws {
        let (events, closure) = try CClosure.makeStream { (n: Int64, _: UnsafeMutableRawPointer?) in n * 10 }
        let id = fx_registry_connect("event", try closure.functionPointer(erasedAs: fx_erased_fn.self), nil, nil)
        #expect(id != 0)
        fx_registry_emit_events(4)
        #expect(fx_registry_disconnect(id) == 1)
        _ = consume closure  // C is done with it: the stream finishes
        let seen = await elements(of: events, count: 100)
        #expect(seen == [0, 10, 20, 30])
    }

    @Test func aStreamBuffersAsItsPolicySays() async throws {
        let (events, closure) = try CClosure.makeStream(bufferingPolicy: .bufferingNewest(2)) {
            (n: Int64, _: UnsafeMutableRawPointer?) in n
        }
        let id = fx_registry_connect("event", try closure.functionPointer(erasedAs: fx_erased_fn.self), nil, nil)
        fx_registry_emit_events(5)
        fx_registry_disconnect(id)
        _ = consume closure
        let seen = await elements(of: events, count: 100)
        #expect(seen == [3, 4])
    }

    @Test func aNotifiedStreamEndsWhenCReleasesTheCallback() async throws {
        let (events, handler) = try NotifiedCallback.makeStream { (n: Int64, _: UnsafeMutableRawPointer?) in n }
        let id = fx_registry_connect(
            "event", try handler.functionPointer(erasedAs: fx_erased_fn.self), handler.userData,
            try handler.destroyNotify(as: fx_closure_notify.self))
        fx_registry_emit_events(3)
        #expect(fx_registry_disconnect(id) == 1)  // GClosureNotify-shaped: releases, and the stream ends
        let seen = await elements(of: events, count: 100)
        #expect(seen == [0, 1, 2])
    }

    @Test func aSlotsCallsComeOutOfAStreamUntilTheIterationEnds() async throws {
        let delegate = TypedDelegate(for: fx_plugin.self)
        try delegate.implement(\fx_plugin.transform) { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
        weak var weakTracked: Tracked?
        let seen: [Int64]
        do {
            let tracked = Tracked(1000)
            weakTracked = tracked
            let calls = try delegate.calls(of: "transform") { [tracked] (_: UnsafeMutableRawPointer?, value: Int64) in value * tracked.value }
            let hammer = fx_hammer_start(delegate.typedTable, 1, 3, 1)  // transform(NULL, 0…2) on a C thread
            seen = await elements(of: calls, count: 3)  // and the iteration ends
            var wrong: Int64 = 0, nullSlots: Int64 = 0
            _ = fx_hammer_join(hammer, &wrong, &nullSlots)
        }  // the stream goes with its iterator
        #expect(seen == [0, 1000, 2000])
        // The loop's end cancelled the observation: its closure is gone, and calls go on without it.
        #expect(weakTracked == nil)
        var called = false
        #expect(fx_plugin_transform(delegate.typedTable, nil, 41, &called) == 42)
    }

    @Test func aSlotsStreamFinishesWhenTheDelegateGoesAway() async throws {
        var delegate: TypedDelegate<fx_plugin>? = TypedDelegate(for: fx_plugin.self)
        let calls = try delegate!.calls(of: "transform", timing: .before) { (_: UnsafeMutableRawPointer?, value: Int64) in value }
        try delegate!.implement(\fx_plugin.transform) { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value }
        var called = false
        _ = fx_plugin_transform(delegate!.typedTable, nil, 7, &called)
        delegate = nil
        let seen = await elements(of: calls, count: 100)
        #expect(seen == [7])
    }

    // MARK: Erased function pointer types

    @Test func anErasedHandlerIsCastBackAndCalledAndReleasedByATwoArgumentNotify() throws {
        weak var weakTracked: Tracked?
        let id: UInt32
        do {
            let tracked = Tracked(3)
            weakTracked = tracked
            let handler = try NotifiedCallback { (value: Int64, _: UnsafeMutableRawPointer?) -> Int64 in value * tracked.value }
            id = fx_registry_connect(
                "value", try handler.functionPointer(erasedAs: fx_erased_fn.self), handler.userData,
                try handler.destroyNotify(as: fx_closure_notify.self))
        }
        #expect(id != 0)
        #expect(fx_registry_emit_value(14) == 42)
        #expect(weakTracked != nil)
        #expect(fx_registry_disconnect(id) == 1)
        #expect(weakTracked == nil)
    }

    @Test func aRefusedRegistrationIsReleasedByHand() throws {
        weak var weakTracked: Tracked?
        do {
            let tracked = Tracked(3)
            weakTracked = tracked
            let handler = try NotifiedCallback { (value: Int64, _: UnsafeMutableRawPointer?) -> Int64 in value * tracked.value }
            let id = fx_registry_connect(
                "no-such-signal", try handler.functionPointer(erasedAs: fx_erased_fn.self), handler.userData,
                try handler.destroyNotify(as: fx_closure_notify.self))
            #expect(id == 0)  // refused: C will never call the notification
            handler.release()
        }
        #expect(weakTracked == nil)
    }

    @Test func aOneParameterDestroyNotifyIsTheSameFunction() throws {
        let handler = try NotifiedCallback { (value: Int64) -> Int64 in value }
        let notify = try handler.destroyNotify(as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)
        #expect(unsafeBitCast(notify, to: UnsafeRawPointer.self) == unsafeBitCast(handler.destroyNotify, to: UnsafeRawPointer.self))
        handler.release()
    }

    // MARK: Tables C owns, filled in place

    @Test func aFilledTableKeepsCsFunctionsBelowItsOverrides() throws {
        let plugin = fx_owned_plugin_new()!
        defer { fx_owned_plugin_free(plugin) }
        let delegate = TypedDelegate(for: fx_plugin.self, filling: plugin)
        #expect(delegate.table == UnsafeMutableRawPointer(plugin))
        var called = false
        #expect(fx_plugin_transform(plugin, nil, 5, &called) == 10)  // C's own, untouched
        try delegate.override(\fx_plugin.transform) { (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            next(context, value) + 1  // chain up to C's function
        }
        #expect(fx_plugin_transform(plugin, nil, 5, &called) == 11)
        #expect(plugin.pointee.version == 1)  // data members are left alone
        let seen = LogBox()
        let token = try delegate.observe("transform", .before) { (_: UnsafeMutableRawPointer?, value: Int64) in seen.append("\(value)") }
        #expect(fx_plugin_transform(plugin, nil, 6, &called) == 13)
        token.cancel()
        #expect(seen.messages == ["6"])
        #expect(delegate.removeImplementation(for: "transform"))
        // C's function itself is back in C's table.
        #expect(UnsafeRawPointer(unsafeBitCast(plugin.pointee.transform, to: UnsafeRawPointer?.self)) == fx_owned_plugin_transform())
        #expect(fx_plugin_transform(plugin, nil, 5, &called) == 10)
    }

    @Test func aFilledTableThatCFreesFirstIsNeverWrittenAgain() throws {
        // Under AddressSanitizer, any write into the freed table is reported.
        var plugin: UnsafeMutablePointer<fx_plugin>? = fx_owned_plugin_new()
        var delegate: TypedDelegate<fx_plugin>? = TypedDelegate(for: fx_plugin.self, filling: plugin!)
        try delegate!.override(\fx_plugin.transform) { (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            next(context, value) * 3
        }
        var called = false
        #expect(fx_plugin_transform(plugin, nil, 1, &called) == 6)
        fx_owned_plugin_free(plugin)  // the library frees its table first
        plugin = nil
        delegate = nil  // and then the delegate goes: its deinitialization leaves the table alone
        #expect(delegate == nil)
    }

    @Test func aDynamicDelegateFillsByDescriptor() throws {
        let plugin = fx_owned_plugin_new()!
        defer { fx_owned_plugin_free(plugin) }
        let delegate = DynamicDelegate(protocol: ProtocolDescriptor(for: fx_plugin.self), filling: plugin)
        try delegate.implement("log") { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) in }
        #expect(plugin.pointee.log != nil)  // a NULL slot of C's table implemented in place
        #expect(delegate.removeImplementation(for: "log"))
        #expect(plugin.pointee.log == nil)
    }
}

/// The first `count` elements of `stream`, or fewer when it finishes first or ten seconds pass (a stream
/// that never finishes fails its test instead of stopping the suite).
func elements<Element: Sendable>(of stream: AsyncStream<Element>, count: Int) async -> [Element] {
    let reading = Task {
        var seen: [Element] = []
        for await element in stream {
            seen.append(element)
            if seen.count == count { break }
        }
        return seen
    }
    let watchdog = Task {
        try await Task.sleep(for: .seconds(10))
        reading.cancel()
    }
    defer { watchdog.cancel() }
    return await reading.value
}

/// A weak reference, to count what closures let go of.
struct Weak: @unchecked Sendable {  // Only read under a lock.
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
