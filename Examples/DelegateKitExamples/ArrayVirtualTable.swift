import DelegateKitCSQLite
import DelegateKit
import Foundation
import Synchronization

/// A read-only SQLite virtual table that serves a Swift array of rows, every `sqlite3_module` method of
/// which is a Swift closure in a ``DelegateKit/DynamicDelegate``.
///
/// The module is eponymous: once registered on a connection, its name is a table there, with no
/// `CREATE VIRTUAL TABLE`.
///
/// ```swift
/// let fruits = ArrayVirtualTable(name: "fruits", columns: ["name", "color"],
///                                rows: [["apple", "red"], ["banana", "yellow"]])
/// try fruits.register(on: db)
/// try sqliteQuery(db, "SELECT name FROM fruits WHERE color = 'red'")   // [["apple"]]
/// ```
///
/// An `=` constraint on a column is answered from a hash index built when the table is made, so such a
/// query visits only the rows that can match (``rowsVisited`` and ``scans`` show it).
///
/// ## Lifetime
/// ``register(on:)`` hands SQLite a retained reference, released by the module destructor SQLite calls
/// when the connection closes (or the module is dropped): the table, its method table and its closures
/// live exactly as long as some connection may call them, whether or not Swift still holds the object.
///
/// ## Threads
/// SQLite calls a connection's methods on the thread using it; several connections may share the table
/// from several threads, since the rows are immutable and the counters are atomic or locked.
public final class ArrayVirtualTable: @unchecked Sendable {  // Rows and indexes are immutable; the log is locked.
    /// How one `xFilter` call chose the rows it walked.
    public enum Scan: Equatable, Sendable {
        /// Every row: no usable constraint.
        case all
        /// Only the rows that can satisfy `column = value`, found in the index.
        case equal(column: String, value: SQLiteValue)
    }

    /// The name the module and its table have on each connection.
    public let name: String
    /// The column names, in order.
    public let columns: [String]
    /// The rows; row `i` has rowid `i + 1`.
    public let rows: [[SQLiteValue]]
    /// The `sqlite3_module` table SQLite calls; its methods are the closures below.
    public let module: DynamicDelegate

    private let indexes: [ColumnIndex]
    private let allRows: [Int]
    private let visited = Atomic<Int>(0)
    private let liveCursors = Atomic<Int>(0)
    private let liveTables = Atomic<Int>(0)
    // NSLock rather than Mutex: ThreadSanitizer sees pthread mutexes, not Mutex's futexes.
    private let lock = NSLock()
    private var scanLog: [Scan] = []

    /// The rows cursors have stood on so far, over every query: with an index a query visits only the
    /// rows that can match, without one it visits them all.
    public var rowsVisited: Int { visited.load(ordering: .relaxed) }
    /// How each `xFilter` so far chose its rows, oldest first.
    public var scans: [Scan] { lock.withLock { scanLog } }
    /// Cursors SQLite has opened and not yet closed.
    public var openCursors: Int { liveCursors.load(ordering: .relaxed) }
    /// `sqlite3_vtab` objects SQLite has connected and not yet disconnected (one per connection using
    /// the table).
    public var connectedTables: Int { liveTables.load(ordering: .relaxed) }

    /// A table of `rows`, each with one value per column of `columns`.
    ///
    /// The columns are declared without a type, so SQLite applies no affinity to the values: each is
    /// compared in the storage class it has here, as in an ordinary table with untyped columns.
    public init(name: String, columns: [String], rows: [[SQLiteValue]]) {
        for (number, row) in rows.enumerated() {
            precondition(row.count == columns.count, "row \(number) has \(row.count) values for \(columns.count) columns")
        }
        self.name = name
        self.columns = columns
        self.rows = rows
        allRows = Array(rows.indices)
        indexes = columns.indices.map { column in ColumnIndex(rows.map { $0[column] }) }
        module = DynamicDelegate(protocol: Self.moduleDescriptor)
        do {
            try installMethods()
        } catch {
            preconditionFailure("the closures have the methods' signatures: \(error)")
        }
    }

    /// Registers the module on `db` under ``name`` with `sqlite3_create_module_v2`; the table can be
    /// queried at once. SQLite keeps this object alive until the connection closes.
    public func register(on db: OpaquePointer) throws {
        let status = sqlite3_create_module_v2(db, name, module.table.assumingMemoryBound(to: sqlite3_module.self),
                                              Unmanaged.passRetained(self).toOpaque(), releaseTable)
        // On failure SQLite has already called the destructor, which balanced the retain.
        guard status == SQLITE_OK else {
            throw SQLiteError(status: status, message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// Forgets ``rowsVisited`` and ``scans``.
    public func resetStatistics() {
        visited.store(0, ordering: .relaxed)
        lock.withLock { scanLog.removeAll() }
    }

    /// `struct sqlite3_module` as sqlite3.h (3.40) declares it: version 3, ending at `xShadowName`.
    /// Reading the declaration, rather than writing each signature again, keeps the slots exactly where
    /// C puts them.
    public static let moduleDeclaration = """
        struct sqlite3_module {
          int iVersion;
          int (*xCreate)(sqlite3*, void *pAux,
                       int argc, const char *const*argv,
                       sqlite3_vtab **ppVTab, char**);
          int (*xConnect)(sqlite3*, void *pAux,
                       int argc, const char *const*argv,
                       sqlite3_vtab **ppVTab, char**);
          int (*xBestIndex)(sqlite3_vtab *pVTab, sqlite3_index_info*);
          int (*xDisconnect)(sqlite3_vtab *pVTab);
          int (*xDestroy)(sqlite3_vtab *pVTab);
          int (*xOpen)(sqlite3_vtab *pVTab, sqlite3_vtab_cursor **ppCursor);
          int (*xClose)(sqlite3_vtab_cursor*);
          int (*xFilter)(sqlite3_vtab_cursor*, int idxNum, const char *idxStr,
                        int argc, sqlite3_value **argv);
          int (*xNext)(sqlite3_vtab_cursor*);
          int (*xEof)(sqlite3_vtab_cursor*);
          int (*xColumn)(sqlite3_vtab_cursor*, sqlite3_context*, int);
          int (*xRowid)(sqlite3_vtab_cursor*, sqlite3_int64 *pRowid);
          int (*xUpdate)(sqlite3_vtab *, int, sqlite3_value **, sqlite3_int64 *);
          int (*xBegin)(sqlite3_vtab *pVTab);
          int (*xSync)(sqlite3_vtab *pVTab);
          int (*xCommit)(sqlite3_vtab *pVTab);
          int (*xRollback)(sqlite3_vtab *pVTab);
          int (*xFindFunction)(sqlite3_vtab *pVtab, int nArg, const char *zName,
                               void (**pxFunc)(sqlite3_context*,int,sqlite3_value**),
                               void **ppArg);
          int (*xRename)(sqlite3_vtab *pVtab, const char *zNew);
          /* The methods above are in version 1 of the sqlite_module object. Those
          ** below are for version 2 and greater. */
          int (*xSavepoint)(sqlite3_vtab *pVTab, int);
          int (*xRelease)(sqlite3_vtab *pVTab, int);
          int (*xRollbackTo)(sqlite3_vtab *pVTab, int);
          /* The methods above are in versions 1 and 2 of the sqlite_module object.
          ** Those below are for version 3 and greater. */
          int (*xShadowName)(const char*);
        };
        """

    /// The `sqlite3_module` table, read from ``moduleDeclaration``.
    public static let moduleDescriptor: ProtocolDescriptor = {
        do {
            return try ProtocolDescriptor(parsing: moduleDeclaration, name: "sqlite3_module", typedefs: SQLiteDescriptors.typedefs)
        } catch {
            preconditionFailure("sqlite3_module: \(error)")
        }
    }()

    private typealias VTab = UnsafeMutablePointer<sqlite3_vtab>
    private typealias CursorPointer = UnsafeMutablePointer<sqlite3_vtab_cursor>

    private func installMethods() throws {
        // Only version-1 methods are implemented; a version-1 module tells SQLite not to look further.
        try module.setField("iVersion", Int32(1))
        let schema = "CREATE TABLE x(" + columns.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            .joined(separator: ", ") + ")"

        // xCreate stays NULL: that is what makes the module eponymous-only, a table in every schema
        // without CREATE VIRTUAL TABLE. xConnect makes the per-connection sqlite3_vtab; it holds nothing of
        // ours (the closures reach the rows through `self`), so it is a bare sqlite3_vtab.
        try module.implement("xConnect") { [unowned self] (db: OpaquePointer?, _: UnsafeMutableRawPointer?, _: Int32,
                                                           _: UnsafePointer<UnsafePointer<CChar>?>?,
                                                           table: UnsafeMutablePointer<VTab?>?,
                                                           _: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 in
            let status = sqlite3_declare_vtab(db, schema)
            guard status == SQLITE_OK else { return status }
            let vtab = VTab.allocate(capacity: 1)
            vtab.initialize(to: sqlite3_vtab())
            table?.pointee = vtab
            liveTables.add(1, ordering: .relaxed)
            return SQLITE_OK
        }
        // xDestroy is what SQLite calls instead of xDisconnect if a table is dropped; both only free what
        // xConnect made.
        for method in ["xDisconnect", "xDestroy"] {
            try module.implement(method) { [unowned self] (vtab: VTab?) -> Int32 in
                vtab?.deinitialize(count: 1).deallocate()
                liveTables.subtract(1, ordering: .relaxed)
                return SQLITE_OK
            }
        }
        try module.implement("xBestIndex") { [unowned self] (_: VTab?, info: UnsafeMutablePointer<sqlite3_index_info>?) -> Int32 in
            guard let info else { return SQLITE_ERROR }
            chooseIndex(info)
            return SQLITE_OK
        }
        try module.implement("xOpen") { [unowned self] (_: VTab?, cursor: UnsafeMutablePointer<CursorPointer?>?) -> Int32 in
            cursor?.pointee = CursorRecord.make()
            liveCursors.add(1, ordering: .relaxed)
            return SQLITE_OK
        }
        try module.implement("xClose") { [unowned self] (cursor: CursorPointer?) -> Int32 in
            CursorRecord.free(cursor)
            liveCursors.subtract(1, ordering: .relaxed)
            return SQLITE_OK
        }
        try module.implement("xFilter") { [unowned self] (cursor: CursorPointer?, indexNumber: Int32, _: UnsafePointer<CChar>?,
                                                          argumentCount: Int32, arguments: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 in
            let state = CursorRecord.state(of: cursor)
            if indexNumber > 0, argumentCount == 1, let arguments {
                let column = Int(indexNumber) - 1
                let value = SQLiteValue(arguments[0])
                lock.withLock { scanLog.append(.equal(column: columns[column], value: value)) }
                state.rows = indexes[column].candidates(equalTo: value)
            } else {
                lock.withLock { scanLog.append(.all) }
                state.rows = allRows
            }
            state.position = 0
            if !state.rows.isEmpty { visited.add(1, ordering: .relaxed) }
            return SQLITE_OK
        }
        try module.implement("xNext") { [unowned self] (cursor: CursorPointer?) -> Int32 in
            let state = CursorRecord.state(of: cursor)
            state.position += 1
            if state.position < state.rows.count { visited.add(1, ordering: .relaxed) }
            return SQLITE_OK
        }
        try module.implement("xEof") { (cursor: CursorPointer?) -> Int32 in
            let state = CursorRecord.state(of: cursor)
            return state.position >= state.rows.count ? 1 : 0
        }
        try module.implement("xColumn") { [unowned self] (cursor: CursorPointer?, context: OpaquePointer?, column: Int32) -> Int32 in
            let state = CursorRecord.state(of: cursor)
            rows[state.rows[state.position]][Int(column)].setResult(of: context)
            return SQLITE_OK
        }
        try module.implement("xRowid") { (cursor: CursorPointer?, rowid: UnsafeMutablePointer<Int64>?) -> Int32 in
            let state = CursorRecord.state(of: cursor)
            rowid?.pointee = Int64(state.rows[state.position] + 1)
            return SQLITE_OK
        }
        try module.validate()
    }

    /// xBestIndex: takes the most selective usable `column = value` constraint, if any, and asks SQLite
    /// to pass its value to xFilter as argv[0], with idxNum naming the column (0: a full scan).
    private func chooseIndex(_ info: UnsafeMutablePointer<sqlite3_index_info>) {
        var best: (constraint: Int, column: Int, rows: Double)?
        for i in 0..<Int(info.pointee.nConstraint) {
            let constraint = info.pointee.aConstraint[i]
            guard constraint.usable != 0, Int32(constraint.op) == SQLITE_INDEX_CONSTRAINT_EQ,
                  constraint.iColumn >= 0, Int(constraint.iColumn) < columns.count else { continue }
            // Under another collation (`= 'RED' COLLATE NOCASE`) text the byte-wise index misses can match.
            guard let collation = sqlite3_vtab_collation(info, Int32(i)), sqlite3_stricmp(collation, "BINARY") == 0 else { continue }
            let column = Int(constraint.iColumn)
            let expected = indexes[column].expectedMatches
            if best.map({ expected < $0.rows }) ?? true { best = (i, column, expected) }
        }
        if let best {
            info.pointee.aConstraintUsage[best.constraint].argvIndex = 1
            // omit stays 0: SQLite still checks `column = value` on each row we return. The index hands out
            // a superset of the matches (see ColumnIndex), because SQLite may apply the other operand's
            // numeric affinity to our values, a conversion xFilter cannot see.
            info.pointee.aConstraintUsage[best.constraint].omit = 0
            info.pointee.idxNum = Int32(best.column + 1)
            info.pointee.estimatedCost = best.rows
            info.pointee.estimatedRows = Int64(best.rows.rounded(.up))
        } else {
            info.pointee.idxNum = 0
            info.pointee.estimatedCost = Double(rows.count) * 10
            info.pointee.estimatedRows = Int64(rows.count)
        }
    }
}

/// The module destructor: balances the retain ``ArrayVirtualTable/register(on:)`` gave SQLite.
private let releaseTable: @convention(c) (UnsafeMutableRawPointer?) -> Void = { table in
    guard let table else { return }
    Unmanaged<ArrayVirtualTable>.fromOpaque(table).release()
}

/// One column's rows by value, for `=`.
private struct ColumnIndex: Sendable {
    var rowsByKey: [SQLiteValue: [Int]] = [:]
    /// Integer and real rows.
    var numericRows: [Int] = []
    /// Text rows that read as numbers ('5', ' 2.50'): SQLite's numeric affinity can turn them into numbers.
    var numericTextRows: [Int] = []
    /// Rows per distinct value, on average: what the planner is told an `=` returns.
    var expectedMatches: Double { rowsByKey.isEmpty ? 1 : max(1, Double(rowsByKey.values.reduce(0) { $0 + $1.count }) / Double(rowsByKey.count)) }

    init(_ values: [SQLiteValue]) {
        for (row, value) in values.enumerated() {
            if let key = value.equalityKey { rowsByKey[key, default: []].append(row) }
            if value.isNumeric { numericRows.append(row) }
            if case .text(let text) = value, Self.readsAsNumber(text) { numericTextRows.append(row) }
        }
    }

    /// Every row that can satisfy `column = value`, in row order, perhaps with some that do not.
    ///
    /// Equal keys are exact when no affinity applies. When the other operand has numeric affinity,
    /// SQLite converts number-like text on both sides first ('5.0' = 5, '5.0' = '5'); rows that could
    /// match only that way are added, and SQLite's own check of each returned row settles them.
    func candidates(equalTo value: SQLiteValue) -> [Int] {
        guard let key = value.equalityKey else { return [] }  // NULL = x is never true.
        let exact = rowsByKey[key] ?? []
        var loose: [Int] = []
        switch value {
        case .integer, .real: loose = numericTextRows
        case .text(let text) where Self.readsAsNumber(text): loose = numericTextRows + numericRows
        default: break
        }
        if loose.isEmpty { return exact }  // The stored array itself: no copy.
        return Array(Set(exact).union(loose)).sorted()
    }

    /// A generous test: whatever Swift reads as a number counts, so no row SQLite would convert is missed.
    static func readsAsNumber(_ text: String) -> Bool {
        Double(text.trimmingCharacters(in: .whitespaces)) != nil
    }
}

/// What SQLite gets for a cursor: its `sqlite3_vtab_cursor` header, which SQLite requires first (it
/// writes `pVtab` there), then a retained reference to the Swift state, as C would lay out
/// `struct { sqlite3_vtab_cursor base; void *state; }`. The memory is made by xOpen and freed by xClose,
/// which SQLite calls exactly once per cursor.
private enum CursorRecord {
    final class State {
        /// The row indexes this scan walks, in order.
        var rows: [Int] = []
        var position = 0
    }

    static let stateOffset = (MemoryLayout<sqlite3_vtab_cursor>.stride + MemoryLayout<UnsafeRawPointer>.alignment - 1)
        & ~(MemoryLayout<UnsafeRawPointer>.alignment - 1)
    static let size = stateOffset + MemoryLayout<UnsafeRawPointer>.size
    static let alignment = max(MemoryLayout<sqlite3_vtab_cursor>.alignment, MemoryLayout<UnsafeRawPointer>.alignment)

    static func make() -> UnsafeMutablePointer<sqlite3_vtab_cursor> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: alignment)
        let header = raw.initializeMemory(as: sqlite3_vtab_cursor.self, to: sqlite3_vtab_cursor())
        (raw + stateOffset).initializeMemory(as: UnsafeRawPointer.self, to: UnsafeRawPointer(Unmanaged.passRetained(State()).toOpaque()))
        return header
    }

    static func state(of cursor: UnsafeMutablePointer<sqlite3_vtab_cursor>?) -> State {
        let state = UnsafeRawPointer(cursor.unsafelyUnwrapped).load(fromByteOffset: stateOffset, as: UnsafeRawPointer.self)
        return Unmanaged<State>.fromOpaque(state).takeUnretainedValue()
    }

    static func free(_ cursor: UnsafeMutablePointer<sqlite3_vtab_cursor>?) {
        guard let cursor else { return }
        let raw = UnsafeMutableRawPointer(cursor)
        Unmanaged<State>.fromOpaque(raw.load(fromByteOffset: stateOffset, as: UnsafeRawPointer.self)).release()
        cursor.deinitialize(count: 1)
        raw.deallocate()
    }
}
