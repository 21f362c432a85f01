/// The C type of a function: its return type, its argument types in order, and whether more arguments
/// may follow them (`...`).
///
/// ```swift
/// let compare = CSignature(.int32, [.pointer, .pointer])
/// compare == (try CSignature(parsing: "int (const void *, const void *)"))   // true
/// print(compare)                                                            // int32_t (void *, void *)
/// ```
public struct CSignature: Hashable, Sendable {
    /// What the function returns; ``CType/void`` for nothing.
    public var returnType: CType
    /// The types of the arguments, first to last; for a variadic function, the ones before `...`.
    public var argumentTypes: [CType]
    /// Whether the function is variadic, `R (A…, ...)`: its callers may pass further arguments, as C
    /// promotes them, after ``argumentTypes``. A closure of such a signature reads them as
    /// ``CVariadicArguments``.
    public var isVariadic: Bool

    /// A signature from its return type and argument types; `isVariadic` for one that ends in `...`.
    public init(_ returnType: CType, _ argumentTypes: [CType], isVariadic: Bool = false) {
        self.returnType = returnType
        self.argumentTypes = argumentTypes
        self.isVariadic = isVariadic
    }
}

extension CSignature: CustomStringConvertible {
    /// The signature in C's notation without a name: `int32_t (void *, void *)`, `void (void)`,
    /// `void (void *, void *, ...)`.
    public var description: String {
        var arguments = argumentTypes.map(\.description)
        if isVariadic { arguments.append("...") }
        return "\(returnType) (\(arguments.isEmpty ? "void" : arguments.joined(separator: ", ")))"
    }
}

extension CSignature {
    /// The signature of a Swift function type whose return and argument types are ``CValue``s.
    ///
    /// Throws ``DelegateError/layoutMismatch(type:cType:swiftSize:swiftAlignment:)`` when a type's stated
    /// C layout disagrees with its Swift layout, so a wrong `cType` is caught before C ever calls.
    @inlinable
    static func of<each A: CValue, R: CValue>(
        _ returnType: R.Type, _ argumentTypes: repeat (each A).Type
    ) throws -> CSignature {
        try of(returning: R.checkedCType(), repeat each argumentTypes)
    }

    /// ``of(_:_:)`` for a return type given as a C type: `returning` is checked after the arguments.
    @inlinable
    static func of<each A: CValue>(
        returning returnType: @autoclosure () throws -> CType, _ argumentTypes: repeat (each A).Type
    ) throws -> CSignature {
        var arguments: [CType] = []
        for type in repeat each argumentTypes {
            arguments.append(try type.checkedCType())
        }
        return CSignature(try returnType(), arguments)
    }

    /// Whether a closure of signature `other` may fill a slot of this signature: same arity, both
    /// variadic or neither, and each return and argument type accepted as ``CType/accepts(_:)`` defines.
    public func accepts(_ other: CSignature) -> Bool {
        guard isVariadic == other.isVariadic, argumentTypes.count == other.argumentTypes.count,
              returnType.accepts(other.returnType) else { return false }
        return argumentTypes.indices.allSatisfy { argumentTypes[$0].accepts(other.argumentTypes[$0]) }
    }

    /// Checks the signature can be prepared for libffi: `void` only as a return type, no empty structs.
    func validate() throws {
        for (index, type) in argumentTypes.enumerated() {
            if let problem = type.problemAsValue() {
                // `[.void]` reads as C's `(void)`, which means no argument: say how to write that.
                let hint = argumentTypes == [.void] ? " (a function without arguments has an empty list: `[]`)" : ""
                throw DelegateError.invalidSignature(self, reason: "argument \(index + 1) \(problem)\(hint)")
            }
        }
        if returnType != .void, let problem = returnType.problemAsValue() {
            throw DelegateError.invalidSignature(self, reason: "the return type \(problem)")
        }
    }
}

extension CType {
    /// Why this type cannot be passed by value, or nil when it can.
    func problemAsValue() -> String? {
        switch self {
        case .void: return "is void, which only a return type may be"
        case .structure(let members):
            if members.isEmpty { return "is a struct with no members, which C does not allow" }
            for member in members {
                if let problem = member.problemAsValue() { return "has a member that \(problem)" }
            }
            return nil
        default: return nil
        }
    }
}
