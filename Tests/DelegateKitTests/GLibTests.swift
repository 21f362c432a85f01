import DelegateKitCGLib
import DelegateKit
import DelegateKitExamples
import DelegateKitDocumentationExamples
import Foundation
import Glibc
import Synchronization
import Testing

/// Waits (sleeping, up to five seconds) until `condition` holds; whether it did.
func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<5000 {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// GLib hands work between threads through its own futex-based locks, which ThreadSanitizer cannot see:
/// it reports every closure made on one thread and run by a GLib thread (a pool's, the main loop's) as a
/// race. Those tests are left out under it; CallbackFormsTests drives the same forms from pthreads, which
/// it sees.
let glibThreadsUnderThreadSanitizer = ConditionTrait.disabled(
    if: underThreadSanitizer, "GLib's thread handoffs are invisible to ThreadSanitizer (see GLibTests)")

/// GLib, GObject and GIO as a new user drives them: one-shots from a GThreadPool, signals whose handlers
/// GLib releases, signals as streams, main-loop sources, GObject subclasses whose class structs are filled
/// in place and chain up, and GIO completions awaited. The examples they use are DelegateKitExamples'.
@Suite(.serialized) struct GLibTests {
    // MARK: One-shots

    @Test(glibThreadsUnderThreadSanitizer) func oneShotsRunByAThreadPoolFedFromFourThreadsReleaseTheirCaptures() throws {
        final class Box: Sendable { let value: Int64; init(_ value: Int64) { self.value = value } }
        let total = Atomic<Int64>(0)
        let pushed = Atomic<Int>(0)
        let weakBoxes = Mutex<[Weak]>([])
        // The pool's function: each item is a one-shot `void (*)(void)` to call.
        let work = try CClosure { (item: UnsafeMutableRawPointer?, _: UnsafeMutableRawPointer?) in
            unsafeBitCast(item, to: (@convention(c) () -> Void).self)()
        }
        var error: UnsafeMutablePointer<GError>?
        let pool = PoolHandle(g_thread_pool_new(try work.functionPointer(), nil, 4, 0, &error))
        #expect(pool.pointer != nil && error == nil)
        let feeders = (0..<4).map { feeder in
            Thread {
                for n in 0..<25 {
                    let box = Box(Int64(feeder * 100 + n))
                    weakBoxes.withLock { $0.append(Weak(box)) }
                    let item = try! CCallback.oneShot { total.add(box.value, ordering: .relaxed) }
                    g_thread_pool_push(pool.pointer, UnsafeMutableRawPointer(mutating: item.address), nil)
                    pushed.add(1, ordering: .releasing)
                }
            }
        }
        for feeder in feeders { feeder.start() }
        // Every item pushed, not just made: a push after the pool is freed would be lost (or worse).
        #expect(eventually { pushed.load(ordering: .acquiring) == 100 })
        g_thread_pool_free(pool.pointer, 0, 1)  // waits for every item and joins the pool's threads
        withExtendedLifetime(work) {}
        var expected: Int64 = 0
        for feeder in 0..<4 { for n in 0..<25 { expected += Int64(feeder * 100 + n) } }
        #expect(total.load(ordering: .relaxed) == expected)
        #expect(weakBoxes.withLock { $0.filter { $0.object != nil }.count } == 0)
    }

    /// GLib pushes to a pool from any thread.
    struct PoolHandle: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<GThreadPool>?
        init(_ pointer: UnsafeMutablePointer<GThreadPool>?) { self.pointer = pointer }
    }

    // MARK: Signals

    @Test func aSignalHandlerRunsAndGLibReleasesItWhenTheObjectIsFinalized() throws {
        let object = GLibCounter.make(try GLibCounter.counterType(), count: 1)
        let seen = Mutex<[Int32]>([])
        weak var weakTracked: Tracked?
        do {
            let tracked = Tracked(10)
            weakTracked = tracked
            // "notify": void (*)(GObject *, GParamSpec *, gpointer user_data)
            let handler = try NotifiedCallback { (object: UnsafeMutablePointer<GObject>?, _: UnsafeMutablePointer<GParamSpec>?, _: gpointer?) in
                seen.withLock { $0.append(GLibCounter.count(of: object!) * Int32(tracked.value)) }
            }
            try GLibSignals.connect(object, "notify::count", handler)
        }
        GLibCounter.setCount(2, of: object)
        GLibCounter.setCount(3, of: object)
        #expect(seen.withLock { $0 } == [20, 30])
        #expect(weakTracked != nil)
        g_object_unref(object)  // finalized: GLib calls the GClosureNotify
        #expect(weakTracked == nil)
        _ = GLibCounter.takeEvents()
    }

    @Test func anUnknownSignalIsRefusedAndItsHandlerReleased() throws {
        let object = GLibCounter.make(try GLibCounter.counterType(), count: 1)
        defer { g_object_unref(object) }
        weak var weakTracked: Tracked?
        do {
            let tracked = Tracked(1)
            weakTracked = tracked
            let handler = try NotifiedCallback { (_: UnsafeMutablePointer<GObject>?, _: gpointer?) in _ = tracked.value }
            let error = #expect(throws: GLibSignals.UnknownSignal.self) {
                try GLibSignals.connect(object, "no-such-signal", handler)
            }
            #expect(error?.description == "GLib: DKCounter has no signal 'no-such-signal'")
        }
        #expect(weakTracked == nil)
        _ = GLibCounter.takeEvents()
    }

    @Test func aSignalsEmissionsComeOutOfAStreamThatEndsWhenGLibReleasesTheHandler() async throws {
        let object = GLibCounter.make(try GLibCounter.counterType(), count: 0)
        let (counts, handler) = try NotifiedCallback.makeStream {
            (object: UnsafeMutablePointer<GObject>?, _: UnsafeMutablePointer<GParamSpec>?, _: gpointer?) in
            GLibCounter.count(of: object!)  // read during the emission
        }
        let id = try GLibSignals.connect(object, "notify::count", handler)
        for count in Int32(1)...3 { GLibCounter.setCount(count, of: object) }
        g_signal_handler_disconnect(UnsafeMutableRawPointer(object), id)  // GLib releases it: the stream ends
        GLibCounter.setCount(4, of: object)
        let seen = await elements(of: counts, count: 100)
        #expect(seen == [1, 2, 3])
        g_object_unref(object)
        _ = GLibCounter.takeEvents()
    }

    // MARK: Main-loop sources

    @Test(glibThreadsUnderThreadSanitizer) func aTimeoutAndAnIdleRunOnTheMainLoopAndAreReleasedWhenRemoved() throws {
        _ = GLibMainLoop.shared
        let ticks = Counter()
        let idles = Counter()
        weak var weakTracked: Tracked?
        do {
            let tracked = Tracked(3)
            weakTracked = tracked
            // GSourceFunc: gboolean (*)(gpointer user_data); G_SOURCE_REMOVE (0) ends the source.
            let tick = try NotifiedCallback { (_: gpointer?) -> gboolean in
                ticks.increment()
                return ticks.value < Int(tracked.value) ? 1 : 0
            }
            g_timeout_add_full(0, 1, try tick.functionPointer(), tick.userData, tick.destroyNotify)
            let idle = try NotifiedCallback { (_: gpointer?) -> gboolean in
                idles.increment()
                return 0
            }
            g_idle_add_full(200, try idle.functionPointer(), idle.userData, idle.destroyNotify)
        }
        #expect(eventually { weakTracked == nil })  // the source was removed, and GLib released the closure
        #expect(ticks.value == 3)
        #expect(eventually { idles.value == 1 })
    }

    // MARK: GObject subclasses

    @Test func aSwiftSubclassFillsItsClassStructInPlaceAndChainsUp() throws {
        let counter = try GLibCounter.counterType()
        _ = GLibCounter.takeEvents()
        // The delegate's table is the class struct GObject allocated.
        #expect(counter.objectClass.table == g_type_class_peek(counter.type))
        let object = GLibCounter.make(counter, count: 5)
        #expect(GLibCounter.count(of: object) == 5)  // set_property at construction, get_property here
        GLibCounter.setCount(9, of: object)
        #expect(GLibCounter.count(of: object) == 9)
        #expect(GLibCounter.takeEvents() == ["DKCounter.constructed"])
        g_object_unref(object)
        #expect(GLibCounter.takeEvents() == ["DKCounter.dispose", "DKCounter.finalize"])
    }

    @Test func aSubclassOfASwiftSubclassChainsUpThroughIt() throws {
        let labeled = try GLibCounter.labeledType()
        _ = GLibCounter.takeEvents()
        let object = GLibCounter.make(labeled, count: 2)
        #expect(GLibCounter.count(of: object) == 2)  // DKCounter's property, through the subclass
        #expect(GLibCounter.takeEvents() == ["DKCounter.constructed", "DKLabeledCounter.constructed"])
        g_object_unref(object)
        #expect(GLibCounter.takeEvents() == ["DKCounter.dispose", "DKLabeledCounter.finalize", "DKCounter.finalize"])
    }

    @Test func propertyMethodsFindNoParentsToChainUpTo() throws {
        let counter = try GLibCounter.counterType()
        let labeled = try GLibCounter.labeledType()
        let object = GLibCounter.make(counter, count: 1)
        _ = GLibCounter.takeEvents()
        // GObject gives each class NULL set_property and get_property: the value found there, at the
        // bottom of the stack, is NULL, so `next` is unavailable and the override handles unknown ids.
        #expect(labeled.objectClass.typedTable.pointee.set_property == nil)
        var value = GValue()
        g_value_init(&value, GLibCounter.intType)
        defer { g_value_unset(&value) }
        counter.objectClass.typedTable.pointee.set_property(object, 99, &value, nil)
        counter.objectClass.typedTable.pointee.get_property(object, 99, &value, nil)
        #expect(GLibCounter.takeEvents() == ["DKCounter.set_property: unknown id 99", "DKCounter.get_property: unknown id 99"])
        #expect(GLibCounter.count(of: object) == 1)
        g_object_unref(object)
        _ = GLibCounter.takeEvents()
    }

    // MARK: GIO, awaited

    @Test(glibThreadsUnderThreadSanitizer) func aFileIsLoadedByGIOAndAwaited() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-gio-\(getpid()).txt").path
        let text = Array("loaded by GIO on its own threads\n".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text)))
        defer { unlink(path) }
        #expect(try await GIOFiles.loadContents(of: path) == text)
    }

    @Test(glibThreadsUnderThreadSanitizer) func aMissingFileThrowsGIOsError() async throws {
        do {
            _ = try await GIOFiles.loadContents(of: "/nonexistent/delegatekit")
            Issue.record("loaded a file that does not exist")
        } catch let error as GLibError {
            #expect(error.domain == "g-io-error-quark" && error.code == Int32(G_IO_ERROR_NOT_FOUND.rawValue))
        }
    }

    @Test(glibThreadsUnderThreadSanitizer) func aCancelledTaskCancelsTheLoad() async throws {
        let loading = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await GIOFiles.loadContents(of: "/etc/hostname")
        }
        do {
            _ = try await loading.value
            Issue.record("the load was not cancelled")
        } catch let error as GLibError {
            #expect(error.isCancellation, "\(error)")
        }
    }

    // MARK: The docs' examples

    @Test(glibThreadsUnderThreadSanitizer) func theReadmesGIOExampleLoadsAFile() async throws {
        _ = GLibMainLoop.shared
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-readme-\(getpid()).txt").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("readme".utf8)))
        defer { unlink(path) }
        #expect(try await loadWithGIO(path) == Array("readme".utf8))
    }

    @Test func theReadmesStreamExamplesSeeEveryCall() async throws {
        let seen = try await streamCalls()
        #expect(seen.progress == [0.25, 0.5, 1.0])
        #expect(seen.transforms == [1, 2, 3])
    }

    @Test func theReadmesSignalExampleRunsItsHandler() throws {
        #expect(try connectSignal() == ["notify::answer"])
    }

    @Test func theReadmesGObjectExampleRegistersItsType() throws {
        let type = try registerSwiftObject()
        #expect(type != 0)
        #expect(String(cString: g_type_name(type)) == "SwiftObject")
    }
}
