// `import DelegateKitMacros` is all a file using `#CClosure` needs: the expansion names DelegateKit's types.
// The macro exists only with the package trait `Macros` (`traits: ["Macros"]` on the `.package` line): a
// declaration whose plug-in is absent draws a warning wherever it is compiled, so without the trait this
// module is DelegateKit alone, and a use of `#CClosure` is "no macro named 'CClosure'".
@_exported import DelegateKit

#if Macros
/// A ``CClosure`` whose calls from C reach the closure with nothing between: the closure's own entry,
/// written where its types are known.
///
/// ```swift
/// import DelegateKitMacros
///
/// let scale = 2.5
/// let weigh = try #CClosure { (count: Int64, mass: Double) -> Double in Double(count) * mass * scale }
/// ```
///
/// Write the closure as for ``CClosure/init(_:)``, with its parameter and result types; the result is the
/// same `CClosure` (same signature, lifetime and threads). Where its code takes the register path (every
/// register-only signature on x86_64 System V), a call from C crosses two frames, the closure's
/// entry and the closure, instead of three (the shared entry, a conversion and the closure), and costs
/// about half of what `CClosure(_:)` adds over a direct C call (Benchmarks/README.md in DelegateKit's
/// repository has the figures). Elsewhere it runs as `CClosure(_:)` does.
///
/// The expansion declares a class, which Swift does not allow inside a generic function or type: there,
/// use `CClosure(_:)`.
@freestanding(expression)
public macro CClosure<each A: CValue, R: CValue>(_ body: @escaping @Sendable (repeat each A) -> R) -> CClosure =
    #externalMacro(module: "DelegateKitMacrosPlugin", type: "CClosureMacro")

/// A ``CClosure`` returning `void` whose calls from C reach the closure with nothing between (see
/// ``CClosure(_:)-<each A, R>``).
@freestanding(expression)
public macro CClosure<each A: CValue>(_ body: @escaping @Sendable (repeat each A) -> Void) -> CClosure =
    #externalMacro(module: "DelegateKitMacrosPlugin", type: "CClosureMacro")
#endif
