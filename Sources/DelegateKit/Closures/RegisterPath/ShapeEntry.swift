/// A typed thunk's captured closure as the context of a common callback shape's register entry (see
/// ``CallbackShapes``): C's trampoline enters the shape's entry with this object, which calls the
/// closure itself.
///
/// The object stores which shape it is, a byte its initializer is given where the generic types are
/// known (so the lookup is a constant), rather than the entry itself: the entry's 17 bytes made every
/// captured closure of two arguments a 56-byte object in a 64-byte malloc chunk, where with the byte it is
/// 40 bytes in a 48-byte one, for every `CClosure` and every typed implementation alike. (An entry the
/// class gave through an override was a call of generic code comparing metatypes for each closure made.
/// `#CClosure`'s entries are another class, ``_DirectEntry``, which stores the entry its expansion hands
/// it.)
@usableFromInline
class ShapeEntry: @unchecked Sendable {  // Immutable; subclasses add only `let`s: a @Sendable closure.
    /// The common shape the object's types are, numbered as ``CallbackShapes/entry(_:)`` numbers them;
    /// 0 for none.
    @usableFromInline let shape: UInt8

    @usableFromInline
    init(shape: UInt8) {
        self.shape = shape
    }

    /// The entry of the shape the object's types are, or nil.
    var entry: RegisterEntry? { CallbackShapes.entry(shape) }
}

extension ShapeEntry {
    /// This object as a ``CallThunk``'s shape, when the register path is on; else nil. Asked only of an
    /// object whose types are a shape: a typed thunk asks when the shape it worked out (and gave the
    /// object) is not 0, a constant once specialized, where the byte the object stores is not folded.
    /// Unretained: the thunk's body captures the object, and a reference of the thunk's own (passed in,
    /// kept and let go) cost each closure made a retain and a release.
    @inlinable
    var unretainedShape: Unmanaged<ShapeEntry>? {
        RegisterPath.isAvailable ? Unmanaged.passUnretained(self) : nil
    }
}
