import DelegateKitCGLib
import Glibc

/// GLib's default main context, run on a thread of its own for the life of the process: where GIO
/// delivers the completions of operations started from threads without a context of their own, and where
/// timeouts and idles added to the default context fire.
public final class GLibMainLoop: Sendable {
    /// The one loop; started on first use.
    public static let shared = GLibMainLoop()

    private init() {
        var thread = pthread_t()
        let loop = g_main_loop_new(nil, 0)
        pthread_create(&thread, nil, { loop in
            g_main_loop_run(OpaquePointer(loop))
            return nil
        }, UnsafeMutableRawPointer(loop))
        pthread_detach(thread)
    }
}

/// A `GError`, taken over from GLib (which it frees).
public struct GLibError: Error, Equatable, CustomStringConvertible {
    /// The error's domain, as its name (`g-io-error-quark`).
    public let domain: String
    /// The domain's code (`G_IO_ERROR_CANCELLED`'s value, say).
    public let code: Int32
    /// GLib's message.
    public let message: String

    /// Takes `error` and frees it.
    public init(taking error: UnsafeMutablePointer<GError>) {
        domain = String(cString: g_quark_to_string(error.pointee.domain))
        code = error.pointee.code
        message = String(cString: error.pointee.message)
        g_error_free(error)
    }

    /// Whether this is GIO's report of a cancelled operation.
    public var isCancellation: Bool { domain == "g-io-error-quark" && code == Int32(G_IO_ERROR_CANCELLED.rawValue) }

    public var description: String { "\(domain) \(code): \(message)" }
}
