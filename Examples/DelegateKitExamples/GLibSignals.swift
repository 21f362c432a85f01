import DelegateKitCGLib
import DelegateKit

/// GObject signals with Swift closures as handlers: GLib keeps each handler until it is disconnected or
/// its instance finalized, then releases it through the destroy notification.
public enum GLibSignals {
    /// GLib did not know the signal: it keeps nothing, and the handler was released.
    public struct UnknownSignal: Error, Equatable, CustomStringConvertible {
        public let signal: String
        public let type: String
        public var description: String { "GLib: \(type) has no signal '\(signal)'" }
    }

    /// Connects `handler` to `signal` (with its detail: `notify::count`) of `instance`.
    ///
    /// GLib stores handlers as `GCallback`, `void (*)(void)`, and casts each back to the signal's own type
    /// before calling it, so the handler is handed over erased; its destroy function is GObject's
    /// two-argument `GClosureNotify`. When GLib refuses the signal (it returns 0 and will never notify),
    /// the handler is released here.
    ///
    /// - Returns: The handler id, for `g_signal_handler_disconnect`.
    @discardableResult
    public static func connect(_ instance: UnsafeMutablePointer<GObject>, _ signal: String, _ handler: NotifiedCallback) throws -> gulong {
        let id = g_signal_connect_data(
            instance, signal, try handler.functionPointer(erasedAs: GCallback.self), handler.userData,
            try handler.destroyNotify(as: GClosureNotify.self), GConnectFlags(rawValue: 0))
        guard id != 0 else {
            handler.release()
            throw UnknownSignal(signal: signal, type: String(cString: g_type_name(instance.pointee.g_type_instance.g_class.pointee.g_type)))
        }
        return id
    }
}
