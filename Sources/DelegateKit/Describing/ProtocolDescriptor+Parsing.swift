extension ProtocolDescriptor {
    /// The callback table `name` (a struct tag or a typedef name for a struct) from C declarations, such
    /// as the text of a library's header:
    ///
    /// ```swift
    /// let io = try ProtocolDescriptor(parsing: sqlite3IoMethodsText, name: "sqlite3_io_methods",
    ///                                 typedefs: ["sqlite3_int64": .int64])
    /// ```
    ///
    /// Function-pointer members become methods with their C signatures; every other member becomes a data
    /// member, laid out by C's rules (a fixed array as its elements in a row). A variadic callback member
    /// (`void (*error)(void *ctx, const char *msg, ...)`) is a method whose signature
    /// ``CSignature/isVariadic``, implemented by closures that read the rest as ``CVariadicArguments``.
    /// The text may hold
    /// several declarations: typedefs, struct definitions (named, nested, anonymous, forward-declared),
    /// enums, prototypes; preprocessor lines and comments are skipped. Bit-fields and unions are refused.
    /// Throws ``DelegateError/syntax(message:text:line:column:)`` saying what was expected and where.
    public init(parsing text: String, name: String, typedefs: [String: CType] = [:]) throws {
        var parser = try CDeclarationParser(text)
        parser.typedefs.merge(typedefs) { _, added in added }
        try parser.parseDeclarations()
        let members = try parser.members(ofStruct: name, at: parser.endToken)
        self.init(name: name, members: try members.map { member in
            if case .pointer(.function(let result, let parameters, let variadic, let at)) = member.type {
                let signature = try parser.signature(returning: result, parameters: parameters, variadic: variadic != nil, at: at)
                return .method(MethodDescriptor(name: member.name, signature: signature))
            }
            return .field(member.name, try parser.valueType(member.type, at: member.token, asParameter: false))
        })
    }
}
