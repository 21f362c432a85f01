// The examples of the README and the DocC catalog about GLib and Swift concurrency: awaiting a C
// completion, calls as streams, erased function pointer types and tables C owns. Each region between
// `// doc:begin NAME` and `// doc:end` appears verbatim in a ```swift block of the docs.
import DelegateKitCGLib
import DelegateKit
import Glibc
import Synchronization

/// The README's GIO example: a file's bytes, loaded by GIO and awaited (GLib's default main context must
/// be running on some thread). Cancelling the task cancels the load.
public func loadWithGIO(_ path: String) async throws -> [UInt8] {
    // doc:begin with-ccallback
    struct Failure: Error { let message: String }
    let file = g_file_new_for_path(path)
    defer { g_object_unref(UnsafeMutableRawPointer(file)) }
    nonisolated(unsafe) let cancellable = g_cancellable_new()   // GCancellable is thread-safe
    defer { g_object_unref(UnsafeMutableRawPointer(cancellable)) }

    let bytes = try await withCCallback(onCancel: { g_cancellable_cancel(cancellable) }) { callback in
        g_file_load_contents_async(file, cancellable, try callback.functionPointer(), nil)
    } receive: { (source: UnsafeMutablePointer<GObject>?, result: OpaquePointer?, _: gpointer?) throws -> [UInt8] in
        var contents: UnsafeMutablePointer<CChar>?, length: gsize = 0, error: UnsafeMutablePointer<GError>?
        guard g_file_load_contents_finish(OpaquePointer(source), result, &contents, &length, nil, &error) != 0 else {
            defer { g_error_free(error) }
            throw Failure(message: String(cString: error!.pointee.message))
        }
        defer { g_free(contents) }                    // read during the call: GIO frees `result` after it
        return Array(UnsafeRawBufferPointer(start: contents, count: Int(length)))
    }
    // doc:end
    return bytes
}

/// The README's stream examples: a C progress callback's calls, and a slot's calls, as `AsyncStream`s.
/// Returns what each loop saw.
public func streamCalls() async throws -> (progress: [Double], transforms: [Int64]) {
    var fractions: [Double] = []
    // doc:begin call-streams
    let (progress, closure) = try CClosure.makeStream(bufferingPolicy: .bufferingNewest(16)) {
        (done: Int64, total: Int64) in Double(done) / Double(total)      // during the call
    }
    let report = try closure.functionPointer(as: (@convention(c) (Int64, Int64) -> Void).self)
    report(1, 4); report(2, 4); report(4, 4)                            // C reports progress…
    _ = consume closure                                                 // …and is done: the stream ends
    for await fraction in progress { fractions.append(fraction) }       // [0.25, 0.5, 1.0]
    // doc:end
    var transforms: [Int64] = []
    let d = DynamicDelegate(protocol: try ProtocolDescriptor(parsing: "struct plugin { long (*transform)(void *, long); };", name: "plugin"))
    try d.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int) -> Int in value * 2 }
    // doc:begin slot-stream
    let calls = try d.calls(of: "transform") { (_: UnsafeMutableRawPointer?, value: Int) in Int64(value) }
    let transform = d.table.load(as: (@convention(c) (UnsafeMutableRawPointer?, Int) -> Int).self)
    for value in 1...3 { _ = transform(nil, value) }                   // C calls: each call yields
    for await value in calls {                                          // 1, 2, 3
        transforms.append(value)
        if transforms.count == 3 { break }
    }
    // doc:end
    return (fractions, transforms)
}

/// The README's signal example: a "notify" handler GLib stores as a `GCallback` and releases through a
/// `GClosureNotify`, on an object of a class whose `finalize` is a Swift override chaining up. Returns
/// the handler's output.
public func connectSignal() throws -> [String] {
    let seen = Log()
    // doc:begin signals
    let object = g_object_new_with_properties(g_object_get_type(), 0, nil, nil)
    let handler = try NotifiedCallback { (object: gpointer?, pspec: UnsafeMutablePointer<GParamSpec>?, _: gpointer?) in
        seen.append("notify::\(String(cString: g_param_spec_get_name(pspec)))")
    }
    let id = g_signal_connect_data(object, "notify", try handler.functionPointer(erasedAs: GCallback.self),
                                   handler.userData, try handler.destroyNotify(as: GClosureNotify.self), GConnectFlags(rawValue: 0))
    if id == 0 { handler.release() }      // refused: GLib will never call the notification
    // doc:end
    let answer = g_param_spec_ref_sink(g_param_spec_int("answer", nil, nil, 0, 100, 42, GParamFlags(rawValue: 1 << 0)))  // G_PARAM_READABLE: GLib 2.8x imports it as .PARAM_READABLE
    g_object_notify_by_pspec(object, answer)  // the handler runs
    g_param_spec_unref(answer)
    g_object_unref(object)  // and GLib releases it
    return seen.lines
}

/// Lines appended from any thread.
final class Log: @unchecked Sendable {  // Guarded by its mutex.
    private var mutex = pthread_mutex_t()
    private var storage: [String] = []
    init() { pthread_mutex_init(&mutex, nil) }
    func append(_ line: String) {
        pthread_mutex_lock(&mutex)
        storage.append(line)
        pthread_mutex_unlock(&mutex)
    }
    var lines: [String] {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return storage
    }
}

/// The README's GObject example: a class whose class struct, allocated by GObject, is filled in place in
/// class_init. Registers the type (once per process: a second registration of the name fails).
public func registerSwiftObject() throws -> GType {
    let type = try SwiftObject.register()
    g_object_unref(g_object_new_with_properties(type, 0, nil, nil))   // "finalizing a SwiftObject"
    return type
}

// doc:begin filling
/// A GObject class written in Swift. GObject allocates its class struct and keeps it for the life of the
/// process, so what fills it lives as long.
enum SwiftObject {
    typealias ObjectNext = Next<UnsafeMutablePointer<GObject>?, Void>
    static let filled = Mutex<[TypedDelegate<GObjectClass>]>([])

    static let classInit = Result {
        try CClosure { (classStruct: gpointer?, _: gpointer?) in
            // GObject copied GObject's methods into the class struct: they stay below the overrides.
            let objectClass = TypedDelegate(for: GObjectClass.self, filling: classStruct!.assumingMemoryBound(to: GObjectClass.self))
            do {
                try objectClass.override(\.finalize) { (next: ObjectNext, object: UnsafeMutablePointer<GObject>?) in
                    print("finalizing a SwiftObject")
                    next(object)                              // chain up: GObject's finalize
                }
            } catch {
                print("SwiftObject: \(error)")
            }
            filled.withLock { $0.append(objectClass) }
        }
    }

    static func register() throws -> GType {
        g_type_register_static_simple(g_object_get_type(), "SwiftObject", guint(MemoryLayout<GObjectClass>.size),
                                      try classInit.get().functionPointer(), guint(MemoryLayout<GObject>.size), nil, GTypeFlags(rawValue: 0))
    }
}
// doc:end
