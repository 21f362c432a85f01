/// A closure with its Swift types, so that a delegate's override of the same types can call it directly
/// instead of laying the arguments out again for libffi: a typed thunk's `Captured` object (a plain
/// layer) or an `Override` (generated: `Captured2<A0, A1, R>`, `Override2<A0, A1, R>`, …), each holding
/// one closure.
///
/// A ``ShapeEntry`` so that the object a typed thunk's two forms capture is this one too: a plain layer
/// costs no object of its own.
@usableFromInline
class TypedEntry: ShapeEntry, @unchecked Sendable {  // Immutable; subclasses add only `let`s.
    /// An entry of no common shape (an override's).
    @usableFromInline
    init() {
        super.init(shape: 0)
    }

    @usableFromInline
    override init(shape: UInt8) {
        super.init(shape: shape)
    }

    /// The closure's Swift function type without `Next` (`(A0, A1) -> R` for a plain layer and an override
    /// alike): two layers of the same one can call each other directly. Each subclass works it out from
    /// its generic arguments, only when a plan is built: stored, it was a function type's metadata looked
    /// up at run time for every closure made.
    var functionType: ObjectIdentifier {
        fatalError("DelegateKit: \(type(of: self)) does not give its function type")
    }
}
