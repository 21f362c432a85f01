/// A ``DynamicDelegate`` for a C struct type Swift imports: its layout comes from the type, its slots
/// are named by key paths, and its table is typed.
///
/// ```swift
/// let io = TypedDelegate(for: sqlite3_io_methods.self)
/// try io.implement(\sqlite3_io_methods.xRead) {
///     (file: UnsafeMutablePointer<sqlite3_file>?, buffer: UnsafeMutableRawPointer?, n: Int32, offset: sqlite3_int64) -> Int32 in …
/// }
/// io.typedTable.pointee.iVersion = 1          // data members: through the typed pointer
/// sqlite3_file.pMethods = UnsafePointer(io.typedTable)
/// ```
///
/// A key path finds the slot by its offset (`MemoryLayout.offset(of:)`). With Swift 6.3 and later a key
/// path literal to a member of up to eight parameters also gives the closure its parameter and result
/// types, from the member's (the key-path `implement`).
/// Otherwise the closure states its types, and must have exactly the member's Swift function type,
/// checked at run time against the type the Swift runtime reports for the member: a mismatch throws
/// ``DelegateError/typeMismatch(member:protocol:expected:actual:)`` naming both types, so a wrong closure
/// is never installed. (A `KeyPath` cannot give the types: a `@convention(c)` type cannot be spelled
/// with generic parameters.)
///
/// Everything else is ``DynamicDelegate``'s, which this class is: methods by name, stacks, observers,
/// forwarding, policies, lifetimes and threads.
public final class TypedDelegate<Table>: DynamicDelegate, @unchecked Sendable {  // State is the superclass's.
    /// An empty table: every slot NULL, every data member zero.
    ///
    /// `Table` must be a C struct imported by Swift; its members are read as ``ProtocolDescriptor/init(for:)``
    /// describes. When they do not add up to the struct's layout, every operation throws.
    ///
    /// `file` and `line` record where the delegate is made, as ``DynamicDelegate/init(protocol:file:line:)`` says.
    public init(for table: Table.Type, file: StaticString = #fileID, line: UInt = #line) {
        super.init(protocol: ProtocolDescriptor(for: table), minimumByteCount: MemoryLayout<Table>.stride, origin: SourceLocation(file: file, line: line))
    }

    /// A table that starts as a copy of a live C table of this type (see
    /// ``DynamicDelegate/init(protocol:wrapping:file:line:)``): overrides see the original function through ``Next``.
    public init(for table: Table.Type, wrapping original: UnsafePointer<Table>, file: StaticString = #fileID, line: UInt = #line) {
        super.init(protocol: ProtocolDescriptor(for: table), minimumByteCount: MemoryLayout<Table>.stride, origin: SourceLocation(file: file, line: line))
        // A defective descriptor's offsets cannot be trusted; every operation reports it instead.
        if (try? descriptor.validate()) != nil { slots.copyTable(from: UnsafeRawPointer(original)) }
    }

    /// Fills a table of this type that C allocated and owns, in place (see
    /// ``DynamicDelegate/init(protocol:filling:file:line:)``, whose lifetime rules apply): overrides are
    /// written into `table`, and see the values found there through ``Next``.
    ///
    /// ```swift
    /// let classDelegate = TypedDelegate(for: GObjectClass.self, filling: objectClass)  // in class_init
    /// try classDelegate.override(\GObjectClass.finalize) { (next: Next<UnsafeMutablePointer<GObject>?, Void>, object: UnsafeMutablePointer<GObject>?) in
    ///     next(object)  // chain up to the parent class
    /// }
    /// ```
    public init(for table: Table.Type, filling cTable: UnsafeMutablePointer<Table>, file: StaticString = #fileID, line: UInt = #line) {
        let descriptor = ProtocolDescriptor(for: table)
        // A defective descriptor's offsets cannot be trusted; every operation reports it instead.
        super.init(
            protocol: descriptor, filling: UnsafeMutableRawPointer(cTable), readsOriginals: (try? descriptor.validate()) != nil,
            origin: SourceLocation(file: file, line: line))
    }

    /// The table, typed, for C to use and for setting data members; valid while the delegate lives.
    ///
    /// C may write into it too, as CPython's `PyType_Ready` sets a type's data members and fills its NULL
    /// slots. The delegate never reads the table back: it writes a slot only when it publishes a change of
    /// that slot (of every slot for `setPolicy` without a method, ``DynamicDelegate/setForwardingTarget(_:)``
    /// and `observeAll`), and writes what it holds: its closure, the original, or NULL. So a function C
    /// writes into a slot the delegate leaves NULL is what C calls there until the delegate's next change of
    /// that slot replaces it, and a removal does not bring it back; C must not write a slot the delegate
    /// made non-NULL, nor assign the whole struct. The delegate writes a data member only through
    /// ``DynamicDelegate/setField(_:_:)``. (<doc:Delegates#Tables-C-writes-into> says it in full.)
    public var typedTable: UnsafeMutablePointer<Table> {
        table.assumingMemoryBound(to: Table.self)
    }

    /// The name of the method `member` is, after checking that a closure of `closureType` fits it.
    @usableFromInline
    func methodName<Member>(_ member: KeyPath<Table, Member>, closureType: String) throws -> String {
        try ReflectedTable.method(member, closureType: closureType).name
    }

    /// The name of the method a key path literal names, passed as a function that says whether the
    /// member it reads is not NULL; after checking that a closure of `closureType` fits it.
    @usableFromInline
    func methodName(readingNonNull member: (Table) -> Bool, closureType: String) throws -> String {
        try ReflectedTable.method(reading: member, closureType: closureType).name
    }

    /// Implements the member `member` with a closure of its exact Swift function type.
    ///
    /// With Swift 6.3 and later, a key path literal to a member of up to eight parameters takes the
    /// closure's types from the member, so they may be left out:
    ///
    /// ```swift
    /// try plugin.implement(\.transform) { context, value in value * 2 }
    /// try threads.implement(\.start) { _ in
    ///     work()
    ///     return nil   // the member returns `void *`: this is UnsafeMutableRawPointer?
    /// }
    /// ```
    ///
    /// (Those forms take the literal as a function that reads the member, which Swift 6.2's compiler
    /// stops on, swiftlang/swift#87264, and which a member of more parameters cannot be read as.)
    /// Otherwise — Swift 6.2, a `KeyPath` value, more than eight parameters, or a closure whose types are
    /// not the member's, to throw the mismatch below rather than fail to compile — this form takes the
    /// key path, and the closure must state every parameter's type (and the result's, unless the body is
    /// one expression): Swift cannot take them from a `KeyPath`, because a `@convention(c)` type cannot be
    /// spelled with generic parameters. Without them the compiler says "cannot infer type of closure
    /// parameter", "type 'Any' cannot conform to 'CValue'" or "no exact matches in call to instance
    /// method 'implement'"; the fix is the same for all three:
    ///
    /// ```swift
    /// try plugin.implement(\.transform) { (context: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value * 2 }
    /// ```
    ///
    /// `key` and `once` are as for `DynamicDelegate.implement(_:key:once:_:)`: without a key this replaces
    /// the slot's previous plain implementation; `once` makes it serve one call and remove itself.
    ///
    /// Throws ``DelegateError/typeMismatch(member:protocol:expected:actual:)`` when the closure's type
    /// differs from the member's, ``DelegateError/invalidMember(_:protocol:reason:)`` when `member` is not a
    /// function-pointer member (a data member, or one that cannot be described in C terms) or `Table`
    /// cannot be read as a table; otherwise as `DynamicDelegate.implement(_:key:once:_:)`. A failed call
    /// installs nothing.
    @inlinable @discardableResult @_nonoverride  // 6.2.3 +assertions crashes without (pack overloads vs. the superclass's).
    @_disfavoredOverload  // The literal's forms (generated), where they exist, wherever both fit.
    public func implement<Member, each A: CValue, R>(
        _ member: KeyPath<Table, Member>, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (repeat each A) -> R
    ) throws -> Registration {
        let name = try methodName(member, closureType: SwiftTypeName.functionType(repeat (each A).self, returning: R.self))
        return try implement(name, key: key, once: once, body)
    }

    /// Adds a layer on top of the member `member` that receives ``Next``, which calls what lies below it;
    /// the closure's types after `Next` must be the member's exactly, and stated, as the key-path
    /// `implement(_:key:once:_:)` says (`Next`'s type arguments are the member's parameter types, then
    /// its result type):
    ///
    /// ```swift
    /// try io.override(\.xSectorSize) { (next: Next<UnsafeMutablePointer<sqlite3_file>?, Int32>,
    ///                                   file: UnsafeMutablePointer<sqlite3_file>?) -> Int32 in
    ///     max(next(file), 4096)
    /// }
    /// ```
    ///
    /// `key` and `once` are as for `DynamicDelegate.override(_:key:once:_:)`: without a key each call adds a
    /// layer, with one it replaces that layer. Throws as the key-path `implement(_:key:once:_:)` does.
    @inlinable @discardableResult @_nonoverride  // As above.
    public func override<Member, each A: CValue, R: CValue>(
        _ member: KeyPath<Table, Member>, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<repeat each A, R>, repeat each A) -> R
    ) throws -> Registration {
        let name = try methodName(member, closureType: SwiftTypeName.functionType(repeat (each A).self, returning: R.self))
        return try override(name, key: key, once: once, body)
    }

    /// Adds a layer on top of a member returning `void`, as the form above does.
    @inlinable @discardableResult @_nonoverride  // As above.
    public func override<Member, each A: CValue>(
        _ member: KeyPath<Table, Member>, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<repeat each A, Void>, repeat each A) -> Void
    ) throws -> Registration {
        let name = try methodName(member, closureType: SwiftTypeName.functionType(repeat (each A).self, returning: Void.self))
        return try override(name, key: key, once: once, body)
    }

    /// The name of the method `member` is, which is the member's own name (`"xRead"` for `\.xRead`), for
    /// the API that takes a method name: ``DynamicDelegate/removeImplementation(for:)``,
    /// ``DynamicDelegate/hasImplementation(for:key:)``, ``DynamicDelegate/responds(to:)``, `observe`,
    /// `implementation(for:as:)`, ``DynamicDelegate/setPolicy(_:for:)``.
    ///
    /// ```swift
    /// io.removeImplementation(for: try io.methodName(of: \.xRead))   // the whole stack
    /// ```
    ///
    /// Throws ``DelegateError/invalidMember(_:protocol:reason:)`` when `member` is not a function-pointer
    /// member, as `implement` does.
    public func methodName<Member>(of member: KeyPath<Table, Member>) throws -> String {
        try ReflectedTable.method(member, closureType: nil).name
    }
}
