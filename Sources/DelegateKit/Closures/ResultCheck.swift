/// How a closure's result type is checked when one generic form takes closures of every result.
///
/// `Void` cannot conform to ``CValue`` (a tuple conforms to no protocol), so a form constrained to
/// `R: CValue` needs a second form for `void` at every arity. The entry points that take an
/// unconstrained `R` instead ask here, when the closure is given, whether `R` is a `CValue`, and open
/// it to build the thunk of that type. They are `@inlinable`: specialized in the caller for a concrete
/// `R`, the test, the cast to the existential and its opening, and the cast of the closure to its own
/// type all fold away, and the call path is the constrained form's, instruction for instruction.
@usableFromInline
enum ResultCheck {
    /// `result` as a ``CValue`` type, or ``DelegateError/unsupportedResult(call:closureType:)``.
    @inlinable
    static func cValue<R>(_ result: R.Type, of call: @autoclosure () -> String, closureType: Any.Type) throws -> any CValue.Type {
        guard let type = result as? any CValue.Type else {
            throw DelegateError.unsupportedResult(call: call(), closureType: String(reflecting: closureType))
        }
        return type
    }
}
