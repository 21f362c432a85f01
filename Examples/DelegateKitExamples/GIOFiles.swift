import DelegateKitCGLib
import DelegateKit

/// GIO's asynchronous file loading, awaited: `g_file_load_contents_async` with its completion a one-shot
/// closure (``withCCallback(isolation:onCancel:_:receive:)``), and task cancellation passed to a
/// `GCancellable`.
public enum GIOFiles {
    /// The bytes of the file at `path`, read by GIO on its own threads.
    ///
    /// Completions arrive on GLib's default main context, which ``GLibMainLoop`` runs. Cancelling the task
    /// cancels the load: GIO then completes with `G_IO_ERROR_CANCELLED`, thrown as a ``GLibError``.
    public static func loadContents(of path: String) async throws -> [UInt8] {
        _ = GLibMainLoop.shared
        let file = g_file_new_for_path(path)
        let cancellable = CancellableHandle()
        defer { g_object_unref(UnsafeMutableRawPointer(file)) }
        return try await withCCallback(onCancel: { cancellable.cancel() }) { callback in
            g_file_load_contents_async(file, cancellable.pointer, try callback.functionPointer(), nil)
        } receive: { (source: UnsafeMutablePointer<GObject>?, result: OpaquePointer?, _: gpointer?) throws -> [UInt8] in
            // During the call: GIO releases `result` when the callback returns.
            var contents: UnsafeMutablePointer<CChar>?
            var length: gsize = 0
            var error: UnsafeMutablePointer<GError>?
            guard g_file_load_contents_finish(OpaquePointer(source), result, &contents, &length, nil, &error) != 0 else {
                throw GLibError(taking: error!)
            }
            defer { g_free(contents) }
            return Array(UnsafeRawBufferPointer(start: contents, count: Int(length)))
        }
    }

    /// A `GCancellable`, which GLib lets any thread cancel.
    private final class CancellableHandle: @unchecked Sendable {  // GCancellable is thread-safe.
        let pointer = g_cancellable_new()
        func cancel() { g_cancellable_cancel(pointer) }
        deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }
    }
}
