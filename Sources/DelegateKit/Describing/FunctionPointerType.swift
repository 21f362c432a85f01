/// Checks the Swift type a C function pointer is asked for as (`functionPointer(as:)`) against the C
/// signature of the closure behind it, through the names the Swift runtime gives types: the same
/// reading (``SwiftTypeName``) that checks a closure against a member of an imported struct.
///
/// Each parameter and the result must be of a C type the closure's accepts (``CType/accepts(_:)``). A
/// name that does not say its C type (a struct or an imported enum, passed by value) must be the
/// closure's own Swift type there, which a closure made from Swift types records; a closure made from a
/// ``CSignature`` alone has none, so such a type cannot be checked and is refused.
enum FunctionPointerType {
    private struct Key: Hashable {
        let requested: ObjectIdentifier
        let signature: CSignature
        let closureType: ObjectIdentifier?
    }

    /// What did not fit (nil: it fits), per requested type and closure: naming types costs string work,
    /// and a program asks for the same few types again and again.
    private static let verdicts = Locked<[Key: String?]>([:])

    /// Throws ``DelegateError/functionTypeMismatch(call:signature:requested:reason:)`` unless `requested`
    /// is a `@convention(c)` function type that fits `signature`.
    /// `call` is formed only for the error: a fitting type, the common case, costs no string work.
    static func check<F>(
        _ requested: F.Type, fits signature: CSignature, closureType: Any.Type?, call: @autoclosure () -> String
    ) throws {
        let key = Key(requested: ObjectIdentifier(requested), signature: signature, closureType: closureType.map(ObjectIdentifier.init))
        let reason: String?
        if let known = verdicts.withLock({ $0[key] }) {
            reason = known
        } else {
            reason = mismatch(requested, signature, closureType)
            verdicts.withLock { $0[key] = .some(reason) }
        }
        if let reason {
            throw DelegateError.functionTypeMismatch(
                call: call(), signature: signature, requested: String(reflecting: requested), reason: reason)
        }
    }

    /// `address` as `F`, after checking that `F` fits `signature` (see ``check(_:fits:closureType:call:)``).
    static func checkedPointer<F>(
        _ address: UnsafeRawPointer, as type: F.Type, fits signature: CSignature, closureType: Any.Type?,
        call: @autoclosure () -> String
    ) throws -> F {
        try check(type, fits: signature, closureType: closureType, call: call())
        return unsafeBitCast(address, to: F.self)
    }

    /// `address` as `F`, any `@convention(c)` function type: the erased form a C API stores and casts back
    /// (GLib's `GCallback`, `void (*)(void)`). Throws, naming both types, when `F` is not a C function
    /// pointer type at all.
    static func erasedPointer<F>(
        _ address: UnsafeRawPointer, as type: F.Type, signature: CSignature, call: @autoclosure () -> String
    ) throws -> F {
        guard functionTypeName(type) != nil else {
            throw DelegateError.functionTypeMismatch(call: call(), signature: signature, requested: String(reflecting: type), reason: notAFunctionType)
        }
        return unsafeBitCast(address, to: F.self)
    }

    /// The parameters' C types of the `@convention(c)` function type `F` when it returns `void`, or nil.
    static func voidFunctionParameters<F>(_ type: F.Type) -> [CType?]? {
        guard let function = functionTypeName(type) else { return nil }
        let parts = SwiftTypeName.parts(ofFunctionType: function)
        guard SwiftTypeName.cType(parts.result, allowVoid: true) == .void else { return nil }
        return parts.parameters.map { SwiftTypeName.cType($0, allowVoid: false) }
    }

    /// The name of `F` as a `@convention(c)` function type (optional or not), or nil when it is none.
    /// The size first: `unsafeBitCast` to anything else would trap without a word.
    private static func functionTypeName<F>(_ type: F.Type) -> String? {
        guard MemoryLayout<F>.size == MemoryLayout<UnsafeRawPointer>.size else { return nil }
        return SwiftTypeName.functionType(String(reflecting: type))
    }

    private static let notAFunctionType = "it is not a @convention(c) function type (pass `address` where C takes a `void *`)"

    /// Why `requested` does not fit `signature`, or nil.
    private static func mismatch<F>(_ requested: F.Type, _ signature: CSignature, _ closureType: Any.Type?) -> String? {
        guard let function = functionTypeName(requested) else { return notAFunctionType }
        let theirs = SwiftTypeName.parts(ofFunctionType: function)
        // The closure's own type is a Swift function type (`(A0, A1) -> R`), spelled like the C one after
        // its attribute.
        let own = closureType.map { SwiftTypeName.parts(ofFunctionType: "@convention(c) " + String(reflecting: $0)) }
        let count = signature.argumentTypes.count
        guard theirs.parameters.count == count else {
            return "it takes \(theirs.parameters.count) \(theirs.parameters.count == 1 ? "parameter" : "parameters"), "
                + "the closure \(count)"
        }
        for (index, name) in theirs.parameters.enumerated() {
            if let problem = misfit(name, signature.argumentTypes[index], own: own?.parameters[index], allowVoid: false) {
                return "its parameter \(index + 1) \(problem)"
            }
        }
        if let problem = misfit(theirs.result, signature.returnType, own: own?.result, allowVoid: true) {
            return "its result \(problem)"
        }
        return nil
    }

    /// Why a value of the Swift type `name` does not fit where the closure has `cType`, or nil.
    /// `own` is the closure's Swift type there, when known.
    private static func misfit(_ name: String, _ cType: CType, own: String?, allowVoid: Bool) -> String? {
        if name == own { return nil }  // Exactly the closure's type: a struct or enum fits itself.
        guard let stated = SwiftTypeName.cType(name, allowVoid: allowVoid) else {
            if let own { return "is `\(name)`, but the closure's is `\(own)`" }
            return "is `\(name)`, passed by value: its name does not give its C type, and a closure made from a C "
                + "signature has no Swift types to compare it with"
        }
        // Swift imports `size_t` as `Int`, so an `Int` may stand for it (and be served by a `UInt` closure).
        if stated.accepts(cType) || (name == "Swift.Int" && CType.size.accepts(cType)) { return nil }
        return "is `\(name)` (C type `\(stated)`), but the closure's is `\(cType)`"
    }
}

extension FunctionPointerType {
    /// Whether `F` is a `@convention(c)` function type, optional or not.
    static func isCFunctionPointer<F>(_ type: F.Type) -> Bool { functionTypeName(type) != nil }
}
