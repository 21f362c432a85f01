/// A C function Swift can call: an address with its C signature, variadic ones included.
///
/// Swift does not import C variadic functions (`sqlite3_config`, `fcntl`, `ioctl`, `snprintf`), nor can it
/// call a function pointer whose type it only learns at run time. A `CFunction` can: its arguments are
/// checked against the signature as a closure's are (``CType/accepts(_:)``), and the call goes through
/// libffi, or, for a register-only signature, straight to the function in registers.
///
/// ```swift
/// let strlen = try CFunction("strlen", declaration: "size_t strlen(const char *)")
/// let length: Int = try "seven!!".withCString { try strlen.call($0) }    // 7
/// let fcntl = try CFunction("fcntl", declaration: "int fcntl(int, int, ...)")
/// let flags: Int32 = try fcntl.call(descriptor, F_GETFL)
/// ```
///
/// The variadic arguments take C's default argument promotions, as they would in C: a `Float` is passed
/// as a `double`, a `Bool`, `Int8`, `UInt8`, `Int16` or `UInt16` as an `int`. Everything else is passed
/// with its own C type, so pass an `Int32` where the format says `%d` and an `Int` where it says `%ld`,
/// exactly as C requires.
///
/// A `CFunction` is immutable and may be called from any number of threads at once.
public final class CFunction: @unchecked Sendable {  // Immutable; the address is code.
    /// Where the function's code is.
    public let address: UnsafeRawPointer
    /// The function's signature; for a variadic function, its named arguments, marked
    /// ``CSignature/isVariadic``.
    public let signature: CSignature
    /// Whether the function takes further arguments after its named ones (`...`): ``signature``'s
    /// ``CSignature/isVariadic``.
    public var isVariadic: Bool { signature.isVariadic }
    /// How messages name the function: its symbol or given name in quotes (`'snprintf'`), or its
    /// address (`the function at 0x…`).
    public let name: String
    /// Keeps the library the function was found in open.
    private let library: CLibrary?
    /// The prepared signature of every call; nil for a variadic function, whose calls each have their own.
    @usableFromInline let prepared: PreparedSignature?
    /// `prepared`'s call interface as a value, which a typed call uses without counting references.
    @usableFromInline let libffiCall: LibffiCall?
    /// `prepared`'s layout of run-time values (``call(_:variadicTypes:)``).
    let runTimeLayout: RunTimeLayout?
    /// The scalar codes a typed call is checked against.
    @usableFromInline let layout: InvocationLayout
    /// `layout`'s, held here too so that a typed call reads them without touching another object (which
    /// costs a retain and a release).
    @usableFromInline let argumentCodes: UnsafeMutableBufferPointer<UInt64>
    @usableFromInline let returnCode: UInt64
    /// Whether a typed call of matching scalars is a direct call in registers (see ``RegisterPath``).
    @usableFromInline let callsInRegisters: Bool
    /// For a variadic function, the same: whether its named arguments and its result take registers, those
    /// of the further arguments (promoted as C promotes them) counted on each call.
    @usableFromInline let variadicCallsInRegisters: Bool
    /// The key of a variadic call's types up to the variadic ones: the return and named types, then a 0,
    /// which no other kind of key has (see ``PreparedSignature``); nil when a structure rules keys out.
    @usableFromInline let variadicKeyPrefix: UInt64?
    /// The Swift types of typed calls that passed the full check.
    @usableFromInline let checkedCalls = CheckedCallTypes()

    /// The function at `address`, of `signature` (the named arguments only, when `isVariadic` or
    /// `signature.isVariadic`).
    ///
    /// `address` must be a function of that signature: C has no way to check it. `name` is how messages
    /// name the function (by default by its address). Throws
    /// ``DelegateError/invalidSignature(_:reason:)`` for a signature libffi cannot call.
    public convenience init(address: UnsafeRawPointer, signature: CSignature, isVariadic: Bool = false, name: String? = nil) throws {
        try self.init(address: address, signature: signature, isVariadic: isVariadic, name: name.map { "'\($0)'" }, library: nil)
    }

    /// The function at `address`, declared in C (`"int (int, ...)"`, `"size_t strlen(const char *)"`);
    /// `typedefs` names further types the declaration uses.
    ///
    /// Throws ``DelegateError/syntax(message:text:line:column:)`` for text that is not a function type.
    public convenience init(address: UnsafeRawPointer, declaration: String, typedefs: [String: CType] = [:], name: String? = nil) throws {
        try self.init(address: address, signature: try CFunction.parse(declaration, typedefs), isVariadic: false, name: name.map { "'\($0)'" }, library: nil)
    }

    /// The function named `symbol` in `library` (by default the process and everything it has loaded).
    ///
    /// Throws ``DelegateError/symbolNotFound(_:library:reason:)`` when there is no such symbol.
    public convenience init(_ symbol: String, signature: CSignature, isVariadic: Bool = false, in library: CLibrary = .process) throws {
        try self.init(
            address: try library.address(of: symbol), signature: signature, isVariadic: isVariadic, name: "'\(symbol)'",
            library: library)
    }

    /// The function named `symbol` in `library`, declared in C (`"int (sqlite3 *, int, ...)"`).
    public convenience init(
        _ symbol: String, declaration: String, typedefs: [String: CType] = [:], in library: CLibrary = .process
    ) throws {
        try self.init(
            address: try library.address(of: symbol), signature: try CFunction.parse(declaration, typedefs), isVariadic: false,
            name: "'\(symbol)'", library: library)
    }

    private init(address: UnsafeRawPointer, signature: CSignature, isVariadic: Bool, name: String?, library: CLibrary?) throws {
        self.address = address
        let isVariadic = isVariadic || signature.isVariadic
        self.signature = CSignature(signature.returnType, signature.argumentTypes, isVariadic: isVariadic)
        self.name = name ?? "the function at \(address)"
        self.library = library
        if isVariadic {
            // Checked now, so that a bad named argument is reported where the function is made.
            try signature.validate()
            prepared = nil
        } else {
            prepared = try PreparedSignature.prepared(signature)
        }
        libffiCall = prepared?.libffiCall
        runTimeLayout = prepared?.runTimeLayout
        layout = InvocationLayout(signature)
        argumentCodes = layout.argumentCodes
        returnCode = layout.returnCode
        callsInRegisters = prepared?.takesRegisters ?? false
        variadicCallsInRegisters = isVariadic && RegisterPath.isAvailable
            && RegisterLayout(signature) != nil
        variadicKeyPrefix = PreparedSignature.key(of: signature).flatMap { $0 >> 60 == 0 ? $0 << 4 : nil }
    }

    private static func parse(_ text: String, _ typedefs: [String: CType]) throws -> CSignature {
        var parser = try CDeclarationParser(text)
        parser.typedefs.merge(typedefs) { _, added in added }
        return try parser.parseSignature()
    }
}

extension CFunction: CustomStringConvertible {
    /// The function's name and C declaration: `'snprintf' int32_t (void *, size_t, void *, ...)`.
    public var description: String { "\(name) \(declaration)" }

    /// The signature in C's notation, ending in `...` for a variadic function.
    var declaration: String { signature.description }
}
