/// A typed thunk's captured closure as the context of a common callback shape's register entry (see
/// ``CallbackShapes``): C's trampoline enters the shape's entry with this object, which calls the
/// closure itself.
///
/// The class gives the entry, worked out from its generic arguments as a closure is made, rather than
/// each object storing it: stored, the entry's 17 bytes made every captured closure of two arguments a
/// 56-byte object in a 64-byte malloc chunk, where without them it is 40 bytes in a 48-byte one, for
/// every `CClosure` and every typed implementation alike. (`#CClosure`'s entries are another class,
/// ``_DirectEntry``, which stores the entry its expansion hands it.)
@usableFromInline
class ShapeEntry: @unchecked Sendable {  // Immutable; subclasses add only `let`s: a @Sendable closure.
    @usableFromInline
    init() {}

    /// The entry of the shape the class's types are, or nil: a constant once specialized.
    @usableFromInline
    var entry: RegisterEntry? { nil }
}

extension ShapeEntry {
    /// This object as a ``CallThunk``'s shape entry: when its types are a shape and the register path is
    /// on.
    @inlinable
    var shapeEntry: ShapeEntry? {
        entry != nil && RegisterPath.isAvailable ? self : nil
    }
}
