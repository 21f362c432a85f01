import DelegateKitCSQLite
import DelegateKit
import DelegateKitExamples
import Testing

/// A SQLite virtual table, a scalar function and a collation, every callback a Swift closure, driven by
/// real SQL on the system SQLite.
@Suite struct SQLiteModuleTests {
    static let people: [[SQLiteValue]] = [
        ["Ada", "engineering", 36], ["Grace", "engineering", 45], ["Linus", "kernel", 28],
        ["Barbara", "research", 52], ["Ken", "kernel", 61], ["Margaret", "engineering", 33],
        ["Dennis", "kernel", 40], ["Frances", "research", 47],
    ]

    func openMemory() throws -> OpaquePointer {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        return try #require(db)
    }

    @Test func eponymousTableAnswersRealSQL() throws {
        let db = try openMemory()
        defer { sqlite3_close(db) }
        let table = ArrayVirtualTable(name: "people", columns: ["name", "team", "age"], rows: Self.people)
        try table.register(on: db)

        // No CREATE VIRTUAL TABLE: the module's name is a table.
        #expect(try sqliteQuery(db, "SELECT count(*), sum(age) FROM people") == [["8", "342"]])
        #expect(try sqliteQuery(db, "SELECT name FROM people WHERE age > 40 ORDER BY age DESC")
            == [["Ken"], ["Barbara"], ["Frances"], ["Grace"]])
        #expect(try sqliteQuery(db, "SELECT team, count(*), max(age) FROM people GROUP BY team ORDER BY team")
            == [["engineering", "3", "45"], ["kernel", "3", "61"], ["research", "2", "52"]])

        // A join with an ordinary table.
        _ = try sqliteQuery(db, "CREATE TABLE teams(team TEXT PRIMARY KEY, floor INTEGER)")
        _ = try sqliteQuery(db, "INSERT INTO teams VALUES ('engineering', 3), ('kernel', 1), ('research', 5)")
        #expect(try sqliteQuery(db, """
            SELECT p.name, t.floor FROM people p JOIN teams t ON t.team = p.team
            WHERE t.floor >= 3 ORDER BY p.name
            """) == [["Ada", "3"], ["Barbara", "5"], ["Frances", "5"], ["Grace", "3"], ["Margaret", "3"]])
        #expect(table.openCursors == 0)
    }

    @Test func bestIndexConstraintsReachFilterAndNarrowTheScan() throws {
        let db = try openMemory()
        defer { sqlite3_close(db) }
        let table = ArrayVirtualTable(name: "people", columns: ["name", "team", "age"], rows: Self.people)
        try table.register(on: db)

        table.resetStatistics()
        #expect(try sqliteQuery(db, "SELECT name FROM people WHERE team = 'kernel' ORDER BY name") == [["Dennis"], ["Ken"], ["Linus"]])
        #expect(table.scans == [.equal(column: "team", value: "kernel")])  // xBestIndex's choice reached xFilter
        #expect(table.rowsVisited == 3)  // not 8: only the index's rows were walked

        table.resetStatistics()
        #expect(try sqliteQuery(db, "SELECT name FROM people WHERE age > 50 ORDER BY name") == [["Barbara"], ["Ken"]])
        #expect(table.scans == [.all])  // no usable `=`: a full scan
        #expect(table.rowsVisited == 8)

        // Joined to an ordinary table, a large virtual table is probed by its `=` constraint once per
        // outer row instead of being scanned.
        let many = ArrayVirtualTable(name: "many", columns: ["name", "n"], rows: (0..<2_000).map { [.text("p\($0)"), .integer(Int64($0))] })
        try many.register(on: db)
        _ = try sqliteQuery(db, "CREATE TABLE wanted(name TEXT)")
        _ = try sqliteQuery(db, "INSERT INTO wanted VALUES ('p7'), ('p1999'), ('nobody')")
        #expect(try sqliteQuery(db, "SELECT m.name, m.n FROM wanted w JOIN many m ON m.name = w.name ORDER BY m.n")
            == [["p7", "7"], ["p1999", "1999"]])
        #expect(many.scans == [.equal(column: "name", value: "p7"), .equal(column: "name", value: "p1999"), .equal(column: "name", value: "nobody")])
        #expect(many.rowsVisited == 2)
    }

    @Test func scalarFunctionAndCollationMadeOfClosures() throws {
        let db = try openMemory()
        defer { sqlite3_close(db) }
        try ArrayVirtualTable(name: "people", columns: ["name", "team", "age"], rows: Self.people).register(on: db)
        try SQLiteFunctions.createFunction("initials", argumentCount: 2, on: db) { arguments in
            guard case .text(let name) = arguments[0], case .text(let team) = arguments[1] else { return .null }
            return .text("\(name.prefix(1))\(team.prefix(1))".uppercased())
        }
        try SQLiteFunctions.createCollation("by_length", on: db) { a, b in
            a.count != b.count ? a.count < b.count : a < b
        }
        #expect(try sqliteQuery(db, "SELECT initials(name, team) FROM people WHERE age < 35 ORDER BY name")
            == [["LK"], ["ME"]])
        #expect(try sqliteQuery(db, "SELECT name FROM people WHERE team = 'kernel' ORDER BY name COLLATE by_length")
            == [["Ken"], ["Linus"], ["Dennis"]])
        #expect(try sqliteQuery(db, "SELECT initials(1, 2)") == [["NULL"]])
        // An error thrown in the function becomes the statement's error.
        struct Refused: Error, CustomStringConvertible { var description: String { "refused by Swift" } }
        try SQLiteFunctions.createFunction("fail", argumentCount: 0, on: db) { _ in throw Refused() }
        #expect { try sqliteQuery(db, "SELECT fail()") } throws: { error in
            (error as? SQLiteError).map { $0.status == SQLITE_ERROR && $0.message == "refused by Swift" } ?? false
        }
    }
}
