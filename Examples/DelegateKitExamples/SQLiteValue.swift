import DelegateKitCSQLite
import Foundation

/// One SQLite value, in one of SQLite's five storage classes: what an ``ArrayVirtualTable`` row holds and
/// what a function made by ``SQLiteFunctions/createFunction(_:argumentCount:deterministic:on:_:)`` takes
/// and returns.
///
/// ```swift
/// let row: [SQLiteValue] = ["apple", 3, 1.5, nil]
/// ```
public enum SQLiteValue: Hashable, Sendable, CustomStringConvertible {
    /// `NULL`.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// The value as SQL would write it: `NULL`, `3`, `1.5`, `'it''s'`, `x'00ff'`.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let bytes):
            let digits = Array("0123456789abcdef")
            return "x'" + String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }) + "'"
        }
    }

    /// Reads a `sqlite3_value *` that SQLite handed to a callback. The value is copied: SQLite's own is
    /// valid only during the call.
    public init(_ value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            // Asking for the text before its length is the order SQLite documents: the text call may
            // convert the value, and the length must describe the converted form.
            let text = sqlite3_value_text(value)
            let count = Int(sqlite3_value_bytes(value))
            self = .text(text.map { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) } ?? "")
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(value)
            let count = Int(sqlite3_value_bytes(value))
            self = .blob(bytes.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? [])
        default: self = .null
        }
    }

    /// Makes this value the result of the function call or column read `context` stands for. SQLite
    /// copies text and blobs (`SQLITE_TRANSIENT`), so nothing Swift owns has to outlive the call.
    public func setResult(of context: OpaquePointer?) {
        switch self {
        case .null: sqlite3_result_null(context)
        case .integer(let value): sqlite3_result_int64(context, value)
        case .real(let value): sqlite3_result_double(context, value)
        case .text(let value):
            // Swift passes the String as a NUL-terminated copy; the explicit byte count keeps embedded NULs.
            sqlite3_result_text64(context, value, sqlite3_uint64(value.utf8.count), sqliteTransient, UInt8(SQLITE_UTF8))
        case .blob(let bytes) where bytes.isEmpty:
            // An empty array may have no storage, and a NULL pointer would make the result NULL, not a blob.
            sqlite3_result_zeroblob(context, 0)
        case .blob(let bytes):
            bytes.withUnsafeBytes { sqlite3_result_blob64(context, $0.baseAddress, sqlite3_uint64($0.count), sqliteTransient) }
        }
    }

    /// The key under which ``ArrayVirtualTable`` indexes this value for `=`: SQLite compares integers
    /// and reals by their numeric value (`4 = 4.0`), so a whole real files under the integer it equals.
    /// `NULL` has no key, as `NULL = x` is never true.
    var equalityKey: SQLiteValue? {
        switch self {
        case .null: return nil
        case .real(let value) where value == value.rounded() && value >= -0x1p63 && value < 0x1p63:
            return .integer(Int64(value))
        default: return self
        }
    }

    /// Integers and reals: the values SQLite compares numerically.
    var isNumeric: Bool {
        switch self {
        case .integer, .real: return true
        default: return false
        }
    }
}

extension SQLiteValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    /// `NULL`.
    public init(nilLiteral: ()) { self = .null }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A real.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// Text.
    public init(stringLiteral value: String) { self = .text(value) }
}

/// `SQLITE_TRANSIENT`: "copy this now". sqlite3.h defines it as `((sqlite3_destructor_type)-1)`, a cast
/// Swift does not import.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
