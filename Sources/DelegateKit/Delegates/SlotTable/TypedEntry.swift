/// A layer's closure with its Swift types, so that a `next` of the same types can call it directly
/// instead of laying the arguments out again for libffi. Generated subclasses (`Plain2<A0, A1, R>`,
/// `Override2<A0, A1, R>`, …) each hold one closure.
@usableFromInline
class TypedEntry {
    /// The closure's Swift function type without `Next` (`(A0, A1) -> R` for a plain layer and an override
    /// alike): two layers of the same one can call each other directly.
    let functionType: ObjectIdentifier

    @usableFromInline init(functionType: Any.Type) { self.functionType = ObjectIdentifier(functionType) }
}
