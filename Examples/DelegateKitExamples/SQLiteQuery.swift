import DelegateKitCSQLite

/// A failed SQLite call: its result code and SQLite's message.
public struct SQLiteError: Error, Equatable, CustomStringConvertible {
    /// The (extended) result code.
    public let status: Int32
    /// `sqlite3_errmsg` at the time.
    public let message: String

    /// "disk I/O error (778)".
    public var description: String { "\(message) (\(status))" }
}

/// Runs one SQL statement and returns every row's columns as text (`NULL` for null).
public func sqliteQuery(_ db: OpaquePointer?, _ sql: String) throws -> [[String]] {
    var statement: OpaquePointer?
    let status = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
    guard status == SQLITE_OK else { throw SQLiteError(status: sqlite3_extended_errcode(db), message: String(cString: sqlite3_errmsg(db))) }
    defer { sqlite3_finalize(statement) }
    var rows: [[String]] = []
    while true {
        let step = sqlite3_step(statement)
        if step == SQLITE_DONE { return rows }
        guard step == SQLITE_ROW else {
            throw SQLiteError(status: sqlite3_extended_errcode(db), message: String(cString: sqlite3_errmsg(db)))
        }
        rows.append((0..<sqlite3_column_count(statement)).map { column in
            sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "NULL"
        })
    }
}
