import DelegateKitCSQLite
import DelegateKit

/// SQL functions and collations made of Swift closures, each one C function pointer (a
/// ``DelegateKit/CClosure``) handed to SQLite.
///
/// ```swift
/// try SQLiteFunctions.createFunction("shout", argumentCount: 1, on: db) { arguments in
///     if case .text(let text) = arguments[0] { return .text(text.uppercased() + "!") }
///     return .null
/// }
/// try SQLiteFunctions.createCollation("nocase_reverse", on: db) { $0.lowercased() > $1.lowercased() }
/// try sqliteQuery(db, "SELECT shout(name) FROM fruits ORDER BY name COLLATE nocase_reverse")
/// ```
///
/// ## Lifetime
/// SQLite owns each closure: it is made with ``DelegateKit/NotifiedCallback/init(_:)-9kpc2`` and registered
/// with its user data and destroy notification, so SQLite frees it when the function or collation is
/// replaced, when the connection closes, or when the registration fails. Nothing needs to be kept on the
/// Swift side, and nothing outlives the connection.
public enum SQLiteFunctions {
    /// Registers the scalar SQL function `name` on `db` with `sqlite3_create_function_v2`. `body` gets the
    /// arguments and returns the result; an error it throws becomes the statement's error, with the
    /// error's description as the message. `argumentCount` -1 takes any number of arguments;
    /// `deterministic` lets SQLite use the function in indexes and evaluate it once for constant
    /// arguments. Registering a name again replaces (and frees) the earlier closure.
    ///
    /// Throws ``SQLiteError`` when SQLite refuses (a bad argument count, or statements still running
    /// that use a function of that name); the closure has been freed by then.
    public static func createFunction(_ name: String, argumentCount: Int32, deterministic: Bool = true, on db: OpaquePointer,
                                      _ body: @escaping @Sendable ([SQLiteValue]) throws -> SQLiteValue) throws {
        let function = try NotifiedCallback { (context: OpaquePointer?, count: Int32, values: UnsafeMutablePointer<OpaquePointer?>?) in
            let arguments = (0..<Int(count)).map { SQLiteValue(values.unsafelyUnwrapped[$0]) }
            do {
                try body(arguments).setResult(of: context)
            } catch {
                // A Swift error cannot unwind through SQLite's C frames; SQLite reports this one instead.
                sqlite3_result_error(context, String(describing: error), -1)
            }
        }
        let flags = SQLITE_UTF8 | (deterministic ? SQLITE_DETERMINISTIC : 0)
        let status = sqlite3_create_function_v2(db, name, argumentCount, flags, function.userData,
                                                try function.functionPointer(), nil, nil, function.destroyNotify)
        // SQLite calls the destroy notification itself when this fails: the closure is already freed.
        guard status == SQLITE_OK else { throw SQLiteError(status: status, message: String(cString: sqlite3_errmsg(db))) }
    }

    /// Registers the collation `name` on `db` with `sqlite3_create_collation_v2`, ordering text the way
    /// `areInIncreasingOrder` orders Swift strings (as `sort(by:)` takes it: a strict weak order). Two
    /// strings neither of which comes first are equal to SQL (`=`, `DISTINCT`, `GROUP BY`). Registering
    /// a name again replaces (and frees) the earlier closure.
    ///
    /// Throws ``SQLiteError`` when SQLite refuses (statements still running that use a collation of that
    /// name); the closure has been freed by then.
    public static func createCollation(_ name: String, on db: OpaquePointer,
                                       by areInIncreasingOrder: @escaping @Sendable (String, String) -> Bool) throws {
        let compare = try NotifiedCallback { (_: UnsafeMutableRawPointer?, leftCount: Int32, left: UnsafeRawPointer?,
                                                  rightCount: Int32, right: UnsafeRawPointer?) -> Int32 in
            // SQLite passes the bytes without a terminating NUL.
            let a = String(decoding: UnsafeRawBufferPointer(start: left, count: Int(leftCount)), as: UTF8.self)
            let b = String(decoding: UnsafeRawBufferPointer(start: right, count: Int(rightCount)), as: UTF8.self)
            return areInIncreasingOrder(a, b) ? -1 : areInIncreasingOrder(b, a) ? 1 : 0
        }
        let status = sqlite3_create_collation_v2(db, name, SQLITE_UTF8, compare.userData,
                                                 try compare.functionPointer(), compare.destroyNotify)
        guard status == SQLITE_OK else {
            // Unlike every other SQLite registration, a failed sqlite3_create_collation_v2 does not call
            // the destroy notification (sqlite3.h says so): freeing the closure is ours to do.
            compare.destroyNotify(compare.userData)
            throw SQLiteError(status: status, message: String(cString: sqlite3_errmsg(db)))
        }
    }
}
