/// How an entry point that takes closures of every result type in one form tells what the result is.
///
/// `Void` cannot conform to ``CValue`` (a tuple conforms to no protocol), so a form constrained to
/// `R: CValue` needs a second form for `void` at every arity. `implement`, ``CClosure``'s initializers,
/// `oneShot` and ``NotifiedCallback`` take one form with `R` left open and ask here when the closure is
/// given, then build the thunk of the constrained form for that type:
///
/// - `Void`: the `void` thunk;
/// - a `CValue`: the thunk of that result type;
/// - anything else: the `void` thunk, the value discarded. That is what the compiler did with two forms:
///   a one-expression closure whose value C cannot receive (`{ seen.insert(x) }`, an atomic's `add`)
///   took the `void` form, its value discarded. A method that returns a value then refuses the closure
///   with ``DelegateError/signatureMismatch(method:protocol:expected:actual:)``, naming `void`.
///
/// The same answer spells such a result `()` where a key path's member type is compared
/// (`SwiftTypeName.functionType`). `DynamicDelegate.implementation(for:as:)`, which must hand back an `R`
/// rather than take one, refuses the third kind with a typed error.
///
/// `override` keeps two forms: an override's result is also what its ``Next`` returns, which must be a C
/// type or nothing, and its open form's casts (of a closure taking `Next`) did not fold away (3 to 4
/// instructions a call more, measured with callgrind).
///
/// Every user is `@inlinable`: specialized in the caller for a concrete `R`, the test, the cast to the
/// existential and its opening, and the cast of the closure to its own type all fold away, and the call
/// path is the constrained form's, instruction for instruction.
@usableFromInline
enum ResultCheck {
    /// `result` as a ``CValue`` type, or nil for `Void` and for a type C cannot receive.
    @inlinable
    static func cValue<R>(_ result: R.Type) -> (any CValue.Type)? {
        result as? any CValue.Type
    }
}
