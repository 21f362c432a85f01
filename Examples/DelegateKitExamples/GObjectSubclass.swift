import DelegateKitCGLib
import DelegateKit
import Synchronization

/// A GObject subclass written in Swift: its class struct, which GObject allocates and owns, is filled in
/// place by a ``TypedDelegate`` in `class_init`, so that each override reaches the parent class's method
/// through `Next` (GObject's chain-up).
///
/// ```swift
/// let counter = try GObjectSubclass(name: "DKCounter", parent: g_object_get_type(), instanceBytes: 8) { objectClass in
///     try objectClass.override(\.finalize) { (next: Next<UnsafeMutablePointer<GObject>?, Void>, object: UnsafeMutablePointer<GObject>?) in
///         // … free what the instance holds …
///         next(object)  // chain up: GObject's finalize
///     }
/// }
/// let object = g_object_new_with_properties(counter.type, 0, nil, nil)
/// ```
///
/// A GObject class lives as long as the process, so the delegate that fills it does too: the subclass
/// keeps it, and is meant to be kept in a `static let`. Registering a type name twice fails.
public final class GObjectSubclass: Sendable {
    /// The registered type.
    public let type: GType
    /// The type's name.
    public let name: String
    /// Where the subclass's own instance bytes begin, after the parent's instance struct.
    public let instanceOffset: Int
    /// The class struct's delegate, made in `class_init`.
    public let objectClass: TypedDelegate<GObjectClass>
    /// `class_init` itself, a closure: GObject may call it only once, but holds the pointer for good.
    private let classInit: CClosure

    /// A subclass failed to register or to set up its class.
    public struct RegistrationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Registers `name` as a subclass of `parent` whose instances have `instanceBytes` more bytes, and
    /// makes its class at once, running `setUp` in `class_init` with the class struct's delegate (install
    /// overrides and properties there).
    public init(
        name: String, parent: GType, instanceBytes: Int,
        setUp: @escaping @Sendable (TypedDelegate<GObjectClass>) throws -> Void
    ) throws {
        var query = GTypeQuery()
        g_type_query(parent, &query)
        guard query.type != 0 else { throw RegistrationError(description: "\(name): the parent type is not a class") }
        let made = Made()
        // class_init: `(gpointer g_class, gpointer class_data)`. It runs during g_type_class_ref below.
        let classInit = try CClosure { (classStruct: UnsafeMutableRawPointer?, _: UnsafeMutableRawPointer?) in
            let objectClass = TypedDelegate(for: GObjectClass.self, filling: classStruct!.assumingMemoryBound(to: GObjectClass.self))
            let outcome = Result { try setUp(objectClass) }.map { objectClass }
            made.outcome.withLock { $0 = outcome }
        }
        self.classInit = classInit
        // Instances round up to pointer alignment, as C's do.
        let offset = (Int(query.instance_size) + 7) & ~7
        type = g_type_register_static_simple(
            parent, name, query.class_size, try classInit.functionPointer(), guint(offset + instanceBytes), nil, GTypeFlags(rawValue: 0))
        guard type != 0 else { throw RegistrationError(description: "\(name): GLib refused to register the type (is the name taken?)") }
        self.name = name
        instanceOffset = offset
        _ = g_type_class_ref(type)  // never unreferenced: a class lives as long as the process
        guard let outcome = made.outcome.withLock({ $0 }) else {
            throw RegistrationError(description: "\(name): GLib did not run class_init")
        }
        objectClass = try outcome.get()
    }

    /// What class_init made, handed back to the initializer.
    private final class Made: Sendable {
        let outcome = Mutex<Result<TypedDelegate<GObjectClass>, any Error>?>(nil)
    }

    /// The subclass's own bytes of `object`, an instance of this type or of a subclass.
    public func instanceBytes(of object: UnsafeMutablePointer<GObject>) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(object) + instanceOffset
    }
}
