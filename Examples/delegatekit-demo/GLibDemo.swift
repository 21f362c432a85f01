import DelegateKitCGLib
import DelegateKit
import DelegateKitExamples
import Glibc
import Synchronization

/// `swift run delegatekit-demo glib`: GLib, GObject and GIO served by closures: a GObject subclass written
/// in Swift whose class struct is filled in place, signals GLib releases, a main-loop timeout, a thread
/// pool running one-shot callbacks, and GIO completions awaited.
enum GLibDemo {
    static func run() async {
        print("== GLib: GObject subclasses, signals, sources, GIO awaited ==")
        do {
            // A GObject subclass in Swift, and a subclass of it: every override chains up.
            let labeled = try GLibCounter.labeledType()
            let object = GLibCounter.make(labeled, count: 3)
            print("a DKLabeledCounter: count \(GLibCounter.count(of: object)); constructed: \(GLibCounter.takeEvents().joined(separator: " → "))")

            // A signal handler GLib keeps until the object goes, and a signal as an AsyncStream.
            let handler = try NotifiedCallback { (object: UnsafeMutablePointer<GObject>?, _: UnsafeMutablePointer<GParamSpec>?, _: gpointer?) in
                print("  notify::count → \(GLibCounter.count(of: object!))")
            }
            try GLibSignals.connect(object, "notify::count", handler)
            let (counts, streamed) = try NotifiedCallback.makeStream {
                (object: UnsafeMutablePointer<GObject>?, _: UnsafeMutablePointer<GParamSpec>?, _: gpointer?) in
                GLibCounter.count(of: object!)
            }
            try GLibSignals.connect(object, "notify::count", streamed)
            GLibCounter.setCount(4, of: object)
            GLibCounter.setCount(5, of: object)
            g_object_unref(object)  // finalized: GLib releases both handlers, and the stream ends
            var seen: [Int32] = []
            for await count in counts { seen.append(count) }
            print("the stream saw \(seen); finalized: \(GLibCounter.takeEvents().joined(separator: " → "))")

            // A timeout on GLib's main loop, awaited; GLib releases its closure when it stops.
            _ = GLibMainLoop.shared
            let ticks = try await withCCallback { done in
                let count = Atomic<Int>(0)
                let finish = try done.functionPointer(as: (@convention(c) (Int32) -> Void).self)
                let tick = try NotifiedCallback { (_: gpointer?) -> gboolean in
                    guard count.add(1, ordering: .relaxed).newValue == 3 else { return 1 }  // G_SOURCE_CONTINUE
                    finish(3)
                    return 0  // G_SOURCE_REMOVE
                }
                g_timeout_add_full(0, 10, try tick.functionPointer(), tick.userData, tick.destroyNotify)
            } receive: { (ticks: Int32) in ticks }
            print("a 10 ms timeout ticked \(ticks) times, then removed itself")

            // A GThreadPool fed from this thread, each item a one-shot callback: each releases what it
            // captured as it returns.
            let sum = Atomic<Int>(0)
            let work = try CClosure { (item: gpointer?, _: gpointer?) in
                unsafeBitCast(item, to: (@convention(c) () -> Void).self)()
            }
            let pool = g_thread_pool_new(try work.functionPointer(), nil, 4, 0, nil)
            for n in 1...100 {
                let item = try CCallback.oneShot { sum.add(n, ordering: .relaxed) }
                g_thread_pool_push(pool, UnsafeMutableRawPointer(mutating: item.address), nil)
            }
            g_thread_pool_free(pool, 0, 1)
            withExtendedLifetime(work) {}
            print("a thread pool ran 100 one-shots: their sum is \(sum.load(ordering: .relaxed))")

            // GIO: a file loaded asynchronously and awaited, and a load whose task was cancelled.
            let path = "/tmp/delegatekit-demo-\(getpid()).txt"
            let text = "read by GIO's threads, awaited by Swift\n"
            if let file = fopen(path, "w") {
                fputs(text, file)
                fclose(file)
            }
            defer { unlink(path) }
            let bytes = try await GIOFiles.loadContents(of: path)
            print("GIO loaded \(bytes.count) bytes: \(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines))")
            let cancelled = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await GIOFiles.loadContents(of: path)
            }
            do {
                _ = try await cancelled.value
            } catch {
                print("a cancelled load: \(error)")
            }
        } catch {
            print("the GLib demo failed: \(error)")
        }
        print()
    }
}
