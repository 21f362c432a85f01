/// An array of C records of an imported struct type that hold function pointers beside names and flags,
/// as one object that owns the records, their closures and their strings.
///
/// Many C APIs take such an array, ended by a record of zeros or given with its count: Python's
/// `PyMethodDef`, `PyGetSetDef` and `PyType_Slot`, Lua's `luaL_Reg`, GLib's `GActionEntry` and
/// `GOptionEntry`. Each row is filled by a closure: data members through the ``Row``'s `setField`,
/// function-pointer members through its ``Row/delegate``, a ``TypedDelegate`` of the row, with its
/// key-path `implement` and the same check of the closure's type. For a layout described at run time,
/// see ``EntryArray``.
///
/// ```swift
/// let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 1)
/// try functions.append { row in
///     try row.setField(\.name, "twice")
///     try row.delegate.implement(\.func) { (state: OpaquePointer?) -> Int32 in
///         lua_pushinteger(state, 2 * luaL_checkinteger(state, 1))
///         return 1
///     }
/// }
/// luaL_setfuncs(state, functions.baseAddress, 0)
/// ```
///
/// ## Lifetime
/// The array owns its memory, every closure its rows hold and every string they were given, and frees
/// them when it is deinitialized; C must not read the records or call their functions after that. The
/// memory is allocated once, for `capacity` rows and a terminator, and never moves. A C library that
/// copies what it needs when handed the array (Lua's `luaL_setfuncs`, GLib's
/// `g_action_map_add_action_entries`) still calls the closures: keep the array for as long as C may.
///
/// ## Changes
/// A row appended later is seen by C that reads the array again. A row's closures change as a slot's
/// do (``TypedDelegate``): no call made after the change returns runs what it replaced. Appends and
/// updates are serialized; a fill closure must not change its own array.
public final class TypedEntryArray<Entry>: @unchecked Sendable {  // Its state is its rows'.
    private let rows: EntryRows<TypedDelegate<Entry>>
    private let origin: SourceLocation
    /// The size of `Entry`'s first member, which a new row's record writes last.
    private let firstMemberSize: Int

    /// An empty array of at most `capacity` rows of `Entry`, a C struct Swift imports: every record zero.
    ///
    /// `file` and `line` record where it is made: in debug builds, a C call through one of its closures
    /// after it is deinitialized stops the process with a message naming them.
    public init(of entry: Entry.Type, capacity: Int, file: StaticString = #fileID, line: UInt = #line) {
        rows = EntryRows(
            name: "TypedEntryArray<\(String(describing: entry))>", size: MemoryLayout<Entry>.size,
            alignment: MemoryLayout<Entry>.alignment, capacity: capacity)
        origin = SourceLocation(file: file, line: line)
        firstMemberSize = ReflectedTable.of(entry).descriptor.members.first?.type.size ?? 0
        CallbackScope.adopt(self)
    }

    /// The first record, for C: ``count`` rows, then a record of zeros. Stable while the array lives.
    public var baseAddress: UnsafeMutablePointer<Entry> { rows.base.assumingMemoryBound(to: Entry.self) }

    /// The number of rows, not counting the terminator.
    public var count: Int { rows.count }

    /// The most rows the array holds.
    public var capacity: Int { rows.capacity }

    /// Each row's delegate, in order: for changing a row's closures later (override, observe, remove).
    public var delegates: [TypedDelegate<Entry>] { rows.delegates }

    /// Appends a row that `fill` fills, and returns its index.
    ///
    /// The row is C's terminator until `fill` returns: then the data members it set are written, the
    /// first member last, so C walking the array meanwhile sees the row whole or not at all.
    ///
    /// Throws ``DelegateError/entryArrayFull(type:capacity:)`` when every row is taken, and whatever
    /// `fill` throws (a closure whose type is not its member's throws
    /// ``DelegateError/typeMismatch(member:protocol:expected:actual:)``); a failed append leaves the array
    /// as it was.
    @discardableResult
    public func append(_ fill: (Row) throws -> Void) throws -> Int {
        try append(from: nil, fill)
    }

    /// Appends `record` as a row, and returns its index: for rows of values only, written as the
    /// initializer the struct imports with spells them.
    ///
    /// ```swift
    /// try slots.append(PyType_Slot(slot: Py_tp_methods, pfunc: UnsafeMutableRawPointer(methods.baseAddress)))
    /// ```
    ///
    /// Its first member is written last, as for a row a fill closure fills. Throws
    /// ``DelegateError/entryArrayFull(type:capacity:)`` when every row is taken.
    @discardableResult
    public func append(_ record: Entry) throws -> Int {
        try append(record) { _ in }
    }

    /// Appends a row that starts as `record` and that `fill` completes, and returns its index: a function
    /// pointer `record` holds is the bottom of its slot's stack, as in a table the delegate fills in
    /// place, and what `fill` sets or implements goes over it. Throws as the `append` of a fill closure alone does.
    @discardableResult
    public func append(_ record: Entry, _ fill: (Row) throws -> Void) throws -> Int {
        try withUnsafeBytes(of: record) { try append(from: $0.baseAddress, fill) }
    }

    private func append(from record: UnsafeRawPointer?, _ fill: (Row) throws -> Void) throws -> Int {
        let origin = origin
        return try rows.append(
            initial: record, firstMemberSize: firstMemberSize,
            makeDelegate: {
                TypedDelegate(for: Entry.self, filling: $0.assumingMemoryBound(to: Entry.self), file: origin.file, line: origin.line)
            },
            fill: { try fill(Row(delegate: $0, recorded: $1, rows: rows)) })
    }

    /// Changes the row at `index`: `fill` replaces its closures through its delegate, as slots change,
    /// and the data members it sets are written when it returns.
    ///
    /// Throws ``DelegateError/entryArrayIndex(type:index:count:)`` for an index of no row, and whatever
    /// `fill` throws (what it changed before throwing stays changed).
    public func update(row index: Int, _ fill: (Row) throws -> Void) throws {
        try rows.update(index) { try fill(Row(delegate: $0, recorded: $1, rows: rows)) }
    }

    /// One row while its fill closure runs.
    public struct Row {
        /// The row's delegate: implement, override and observe its function-pointer members through it.
        public let delegate: TypedDelegate<Entry>
        let recorded: RecordedRow
        let rows: EntryRows<TypedDelegate<Entry>>

        /// Sets the data member `member` to `value` (written when the fill closure returns).
        ///
        /// Throws ``DelegateError/notAField(_:protocol:signature:)`` for a function-pointer member, which
        /// takes a closure through ``delegate`` (or ``setField(_:holding:)``), and
        /// ``DelegateError/notTrivial(type:)`` for a value C could not copy (one holding a Swift reference).
        public func setField<Value>(_ member: WritableKeyPath<Entry, Value>, _ value: Value) throws {
            guard _isPOD(Value.self) else { throw DelegateError.notTrivial(type: String(reflecting: Value.self)) }
            recorded.record(value, at: try ReflectedTable.dataOffset(member))
        }

        /// Sets the member `member` to `closure`'s function pointer, which the array keeps as long as it
        /// lives; for a member C calls as another type than it declares, so that the row's delegate, whose
        /// check is the member's type, refuses the closure: CPython's `ml_meth` holding a function of
        /// three arguments for `METH_KEYWORDS`, a `void *` holding a function (`PyType_Slot`'s `pfunc`).
        ///
        /// ```swift
        /// try row.setField(\.ml_flags, METH_VARARGS | METH_KEYWORDS)
        /// try row.setField(\.ml_meth, holding: CClosure { (module: PyObjectPointer, arguments: PyObjectPointer, keywords: PyObjectPointer) in … })
        /// ```
        ///
        /// Nothing checks what C calls the pointer as (see
        /// ``CFunctionPointerConvertible/functionPointer(erasedAs:)``), and the member is written as data:
        /// not a slot the delegate changes. Throws
        /// ``DelegateError/invalidMember(_:protocol:reason:)`` when the member is neither a C function
        /// pointer nor a raw pointer.
        public func setField<Value>(_ member: WritableKeyPath<Entry, Value>, holding closure: CClosure) throws {
            let offset = try ReflectedTable.storedOffset(member)
            switch Value.self {
            case is UnsafeMutableRawPointer?.Type, is UnsafeRawPointer?.Type, is OpaquePointer?.Type:
                recorded.record(closure.address, at: offset)
            default:
                do {
                    recorded.record(try closure.functionPointer(erasedAs: Value.self), at: offset)
                } catch {
                    throw DelegateError.invalidMember(
                        "\(member)", protocol: String(describing: Entry.self),
                        reason: "it holds a `\(String(reflecting: Value.self))`, not a C function pointer or a raw pointer")
                }
            }
            rows.keep(closure)
        }

        /// Sets the `const char *` member `member` to a copy of `string`, which the array keeps as long as
        /// it lives (C may keep the pointer: CPython keeps a method's name).
        public func setField(_ member: WritableKeyPath<Entry, UnsafePointer<CChar>?>, _ string: String) throws {
            recorded.record(Optional(rows.keep(string)), at: try ReflectedTable.dataOffset(member))
        }
    }
}
