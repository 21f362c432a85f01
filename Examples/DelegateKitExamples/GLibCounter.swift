import DelegateKitCGLib
import DelegateKit
import Synchronization

/// Two GObject classes written in Swift (``GObjectSubclass``): `DKCounter`, with a read-write integer
/// property "count" kept in the instance, and `DKLabeledCounter`, its subclass. constructed, dispose and
/// finalize chain up; set_property and get_property have nothing to chain up to, since GObject does not
/// inherit them (it calls the class that owns the property). Each override records what ran, in order
/// (``takeEvents()``).
public enum GLibCounter {
    /// "count"'s property id.
    public static let countProperty: guint = 1

    /// `DKCounter`: constructed, dispose, finalize, set_property and get_property in Swift.
    public static func counterType() throws -> GObjectSubclass { try counter.get() }
    /// `DKLabeledCounter`, a subclass of `DKCounter`: constructed and finalize in Swift, chaining up to
    /// `DKCounter`'s, which chain up to GObject's.
    public static func labeledType() throws -> GObjectSubclass { try labeled.get() }

    /// What the overrides ran, in order: `DKCounter.constructed`, `DKLabeledCounter.finalize`, …
    public static func takeEvents() -> [String] {
        events.withLock { events in
            defer { events = [] }
            return events
        }
    }

    private static let events = Mutex<[String]>([])
    private static func record(_ event: String) { events.withLock { $0.append(event) } }

    typealias ObjectNext = Next<UnsafeMutablePointer<GObject>?, Void>
    typealias SetPropertyNext = Next<UnsafeMutablePointer<GObject>?, guint, UnsafePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?, Void>
    typealias GetPropertyNext = Next<UnsafeMutablePointer<GObject>?, guint, UnsafeMutablePointer<GValue>?, UnsafeMutablePointer<GParamSpec>?, Void>

    private static let counter = Result {
        try GObjectSubclass(name: "DKCounter", parent: g_object_get_type(), instanceBytes: MemoryLayout<Int32>.stride) { objectClass in
            try objectClass.override(\.set_property) {
                (next: SetPropertyNext, object: UnsafeMutablePointer<GObject>?, id: guint, value: UnsafePointer<GValue>?,
                 pspec: UnsafeMutablePointer<GParamSpec>?) in
                guard id == countProperty, let object, let type = try? counterType() else {
                    // GObject does not inherit set_property (each class starts with NULL there, since it
                    // calls the class that owns the property): there is no parent's to chain up to.
                    return next.isAvailable ? next(object, id, value, pspec) : record("DKCounter.set_property: unknown id \(id)")
                }
                type.instanceBytes(of: object).storeBytes(of: g_value_get_int(value), as: Int32.self)
            }
            try objectClass.override(\.get_property) {
                (next: GetPropertyNext, object: UnsafeMutablePointer<GObject>?, id: guint, value: UnsafeMutablePointer<GValue>?,
                 pspec: UnsafeMutablePointer<GParamSpec>?) in
                guard id == countProperty, let object, let type = try? counterType() else {
                    return next.isAvailable ? next(object, id, value, pspec) : record("DKCounter.get_property: unknown id \(id)")
                }
                g_value_set_int(value, type.instanceBytes(of: object).load(as: Int32.self))
            }
            // After set_property and get_property are in the class struct: GObject checks they are.
            g_object_class_install_property(
                objectClass.typedTable, countProperty,
                g_param_spec_int("count", "Count", "How far it counted", 0, Int32.max, 0, GParamFlags(rawValue: 3)))  // G_PARAM_READWRITE (.PARAM_READWRITE in GLib 2.8x)
            try objectClass.override(\.constructed) { (next: ObjectNext, object: UnsafeMutablePointer<GObject>?) in
                next(object)  // GObject's first, as GObject asks
                record("DKCounter.constructed")
            }
            try objectClass.override(\.dispose) { (next: ObjectNext, object: UnsafeMutablePointer<GObject>?) in
                record("DKCounter.dispose")
                next(object)
            }
            try objectClass.override(\.finalize) { (next: ObjectNext, object: UnsafeMutablePointer<GObject>?) in
                record("DKCounter.finalize")
                next(object)  // GObject's finalize last, as GObject asks
            }
        }
    }

    private static let labeled = Result {
        try GObjectSubclass(name: "DKLabeledCounter", parent: try counterType().type, instanceBytes: 0) { objectClass in
            try objectClass.override(\.constructed) { (next: ObjectNext, object: UnsafeMutablePointer<GObject>?) in
                next(object)  // DKCounter's, found in the class struct GObject copied from it
                record("DKLabeledCounter.constructed")
            }
            try objectClass.override(\.finalize) { (next: ObjectNext, object: UnsafeMutablePointer<GObject>?) in
                record("DKLabeledCounter.finalize")
                next(object)
            }
        }
    }

    /// A new `DKCounter` (or `DKLabeledCounter`) with "count" set, owned by the caller.
    public static func make(_ type: GObjectSubclass, count: Int32) -> UnsafeMutablePointer<GObject> {
        var name: UnsafePointer<CChar>? = UnsafePointer(strdup("count"))
        defer { free(UnsafeMutableRawPointer(mutating: name)) }
        return withIntValue(count) { value in
            withUnsafeMutablePointer(to: &name) { names in g_object_new_with_properties(type.type, 1, names, value) }
        }!
    }

    /// "count" of a counter, read through GObject's property machinery (so through get_property).
    public static func count(of object: UnsafeMutablePointer<GObject>) -> Int32 {
        withIntValue(0) { value in
            g_object_get_property(object, "count", value)
            return g_value_get_int(value)
        }
    }

    /// Sets "count" through GObject's property machinery (set_property, then the "notify" signal).
    public static func setCount(_ count: Int32, of object: UnsafeMutablePointer<GObject>) {
        withIntValue(count) { value in g_object_set_property(object, "count", value) }
    }

    /// `G_TYPE_INT`, a macro Swift does not import: the fundamental type number 6, shifted.
    public static var intType: GType { GType(6 << G_TYPE_FUNDAMENTAL_SHIFT) }

    /// Runs `body` with a `GValue` holding the `int` `initial`, unset afterwards.
    private static func withIntValue<T>(_ initial: Int32, _ body: (UnsafeMutablePointer<GValue>) -> T) -> T {
        var value = GValue()
        g_value_init(&value, intType)
        g_value_set_int(&value, initial)
        defer { g_value_unset(&value) }
        return body(&value)
    }
}
