import DelegateKitCSQLite
import DelegateKit
import DelegateKitExamples
import Synchronization

/// SQLite's allocator table and error log, configured from Swift alone: `sqlite3_config` is variadic, and
/// Swift imports no variadic C function, so the calls go through a `CFunction`. Runs while no connection
/// is open, as SQLite requires.
enum SQLiteConfigurationDemo {
    static func run() {
        print("== SQLite's allocator and log, configured from Swift (sqlite3_config is variadic) ==")
        do {
            let allocator = try CountingAllocator()
            try allocator.install()
            let rows = try withDatabase { db in
                _ = try sqliteQuery(db, "CREATE TABLE t(x)")
                _ = try sqliteQuery(db, "INSERT INTO t VALUES (1), (2), (3)")
                return try sqliteQuery(db, "SELECT sum(x) FROM t")
            }
            try SQLiteConfiguration.reconfigure {}  // shut down: SQLite frees what it kept
            print("sum through the counting allocator:", rows.first?.first ?? "none")
            print("allocations: \(allocator.allocationCount), live after shutdown: \(allocator.liveCount)")
            try allocator.uninstall()
            let before = allocator.allocationCount
            _ = try withDatabase { db in try sqliteQuery(db, "SELECT 1") }
            print("default allocator restored: \(try allocator.originalIsInstalled() && allocator.allocationCount == before ? "yes" : "no")")

            let messages = Messages()
            let log = try SQLiteLog { code, message in messages.list.withLock { $0.append("(\(code)) \(message)") } }
            _ = try? withDatabase { db in try sqliteQuery(db, "SELEC 1") }
            try log.remove()
            for message in messages.list.withLock({ $0 }) { print("log:", message) }
        } catch {
            print("error:", error)
        }
        print()
    }

    final class Messages: Sendable {
        let list = Mutex<[String]>([])
    }

    static func withDatabase<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
        var db: OpaquePointer?
        guard sqlite3_open(":memory:", &db) == SQLITE_OK else { throw SQLiteConfigurationError.status(sqlite3_errcode(db)) }
        defer { sqlite3_close(db) }
        return try body(db)
    }
}
