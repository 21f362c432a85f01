import DelegateKitCSQLite
import DelegateKit
import DelegateKitExamples
import Foundation
import Testing

/// SQLite's default VFS wrapped by a DynamicDelegate: originals until overridden, then overridden
/// methods that call through to them.
@Suite(.serialized) struct SQLiteVFSTests {
    @Test func descriptorsMatchTheImportedStructs() {
        #expect(SQLiteDescriptors.ioMethods.size == MemoryLayout<sqlite3_io_methods>.size)
        #expect(SQLiteDescriptors.ioMethods.method(named: "xRead")?.offset == MemoryLayout<sqlite3_io_methods>.offset(of: \sqlite3_io_methods.xRead))
        #expect(SQLiteDescriptors.ioMethods.method(named: "xUnfetch")?.offset == MemoryLayout<sqlite3_io_methods>.offset(of: \sqlite3_io_methods.xUnfetch))
        #expect(SQLiteDescriptors.vfs.size == MemoryLayout<sqlite3_vfs>.size)
        #expect(SQLiteDescriptors.vfs.method(named: "xOpen")?.offset == MemoryLayout<sqlite3_vfs>.offset(of: \sqlite3_vfs.xOpen))
        #expect(SQLiteDescriptors.vfs.method(named: "xNextSystemCall")?.offset == MemoryLayout<sqlite3_vfs>.offset(of: \sqlite3_vfs.xNextSystemCall))
    }

    @Test func wrappedSlotsStartAsTheOriginalsAndComeBackAfterRemoval() throws {
        let base = try #require(sqlite3_vfs_find(nil))
        let wrapper = DynamicDelegate(protocol: SQLiteDescriptors.vfs, wrapping: UnsafeRawPointer(base))
        let table = wrapper.table.assumingMemoryBound(to: sqlite3_vfs.self)
        func same<F>(_ a: F?, _ b: F?) -> Bool { unsafeBitCast(a, to: UnsafeRawPointer?.self) == unsafeBitCast(b, to: UnsafeRawPointer?.self) }
        #expect(same(table.pointee.xOpen, base.pointee.xOpen))  // the original pointer itself: no overhead
        #expect(table.pointee.szOsFile == base.pointee.szOsFile)  // data members copied
        #expect(table.pointee.pAppData == base.pointee.pAppData)
        #expect(wrapper.responds(to: "xSleep"))

        try wrapper.override("xSleep", key: "trace") { (next: Next<UnsafeMutableRawPointer?, Int32, Int32>, vfs: UnsafeMutableRawPointer?, micros: Int32) -> Int32 in
            next(vfs, micros)
        }
        #expect(!same(table.pointee.xSleep, base.pointee.xSleep))
        #expect(table.pointee.xSleep(table, 1) == base.pointee.xSleep(base, 1))  // the original answers below
        wrapper.removeImplementation(for: "xSleep", key: "trace")
        #expect(same(table.pointee.xSleep, base.pointee.xSleep))  // restored

        // A NULL original slot (a gap an older library left) can be implemented.
        var gappy = base.pointee
        gappy.xCurrentTimeInt64 = nil
        let filled = try withUnsafePointer(to: &gappy) { original in
            let filled = DynamicDelegate(protocol: SQLiteDescriptors.vfs, wrapping: UnsafeRawPointer(original))
            #expect(!filled.responds(to: "xCurrentTimeInt64"))
            try filled.implement("xCurrentTimeInt64") { (_: UnsafeMutableRawPointer?, out: UnsafeMutablePointer<Int64>?) -> Int32 in
                out!.pointee = 42
                return 0
            }
            return filled
        }
        var now: Int64 = 0
        let filledTable = filled.table.assumingMemoryBound(to: sqlite3_vfs.self)
        #expect(filledTable.pointee.xCurrentTimeInt64(filledTable, &now) == 0 && now == 42)
    }

    @Test func realSQLThroughATracedVFSWithAnInjectedWriteError() throws {
        // The trace observes every slot, most of them wrapped originals nobody overrides: calls go through.
        let traceLines = LogBox()
        let traced = try TracedVFS(name: "delegatekit-test-\(UUID().uuidString.prefix(8))") { traceLines.append($0) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-vfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var db: OpaquePointer?
        let path = directory.appendingPathComponent("test.db").path
        #expect(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, traced.name) == SQLITE_OK)
        defer { sqlite3_close(db) }

        _ = try query(db, "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, value REAL)")
        _ = try query(db, "BEGIN")
        for i in 1...500 { _ = try query(db, "INSERT INTO items(name, value) VALUES ('item \(i)', \(Double(i) / 4))") }
        _ = try query(db, "COMMIT")
        #expect(traced.writes > 0)
        let writesBefore = traced.writes

        // Drop SQLite's page cache so the query must read the file through the VFS.
        sqlite3_db_release_memory(db)
        let readsBefore = traced.reads
        #expect(try query(db, "SELECT count(*), sum(value) FROM items") == [["500", "31312.5"]])
        #expect(traced.reads > readsBefore)

        // One failed write: SQLite reports the I/O error and rolls the transaction back.
        traced.failNextWrite()
        let failure = #expect(throws: SQLiteError.self) {
            _ = try query(db, "BEGIN")
            defer { _ = try? query(db, "ROLLBACK") }
            _ = try query(db, "UPDATE items SET value = -1")
            _ = try query(db, "COMMIT")
        }
        #expect(traced.writes > writesBefore)
        #expect(failure.map { $0.status & 0xff } == SQLITE_IOERR)  // an extended I/O error code
        #expect(failure?.message == "disk I/O error")

        // Without the fault the database is intact and unchanged.
        #expect(try query(db, "PRAGMA integrity_check") == [["ok"]])
        #expect(try query(db, "SELECT count(*), sum(value) FROM items") == [["500", "31312.5"]])
        let methods = Set(traceLines.messages.map { String($0.dropFirst(5).prefix { $0 != "(" }) })
        #expect(methods.isSuperset(of: ["xOpen", "xFullPathname", "xAccess", "xRead", "xWrite", "xLock", "xUnlock", "xSync", "xFileSize", "xClose"]))
        _ = try query(db, "INSERT INTO items(name, value) VALUES ('after', 1)")
        #expect(try query(db, "SELECT count(*) FROM items") == [["501"]])
    }
}
