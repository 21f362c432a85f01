import DelegateKitCSQLite
import DelegateKit
import DelegateKitExamples
import Foundation
import Synchronization

/// SQLite's default VFS wrapped at run time: every method the original until overridden; reads and
/// writes counted; one write failed on purpose; the database checked afterwards.
enum SQLiteVFSDemo {
    static func run() {
        print("== a traced SQLite VFS ==")
        let lines = Mutex<[String]>([])
        do {
            let traced = try TracedVFS(name: "traced") { line in lines.withLock { $0.append(line) } }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-demo-\(getpid())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }

            var db: OpaquePointer?
            let path = directory.appendingPathComponent("demo.db").path
            guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "traced") == SQLITE_OK else {
                return print("could not open the database")
            }
            defer { sqlite3_close(db) }

            _ = try sqliteQuery(db, "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)")
            _ = try sqliteQuery(db, "INSERT INTO notes(text) VALUES ('closures'), ('as'), ('C callbacks')")
            print("first calls through the VFS:")
            for line in lines.withLock({ $0.prefix(8) }) { print("  " + line) }
            print("rows:", try sqliteQuery(db, "SELECT text FROM notes ORDER BY id").map { $0[0] }.joined(separator: " "))
            print("reads \(traced.reads), writes \(traced.writes)")

            traced.failNextWrite()
            do {
                _ = try sqliteQuery(db, "INSERT INTO notes(text) VALUES ('lost')")
            } catch {
                print("an injected write failure reaches SQL:", error)
            }
            print("integrity_check:", try sqliteQuery(db, "PRAGMA integrity_check")[0][0],
                  "| rows:", try sqliteQuery(db, "SELECT count(*) FROM notes")[0][0])
            let byMethod = Dictionary(grouping: lines.withLock { $0 }) { $0.split(separator: "(")[0] }
            print("calls traced:", byMethod.map { "\($0.key.split(separator: " ").last!) \($0.value.count)" }.sorted().joined(separator: ", "))
        } catch {
            print("error:", error)
        }
        print()
    }
}
