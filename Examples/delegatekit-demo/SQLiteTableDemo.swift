import DelegateKitCSQLite
import DelegateKit
import DelegateKitExamples

/// `swift run delegatekit-demo sqlite`: a Swift array served to SQLite as a virtual table whose every
/// `sqlite3_module` method is a closure, plus a SQL function and a collation made of closures.
enum SQLiteTableDemo {
    static func run() {
        print("== SQLite: a virtual table, a function and a collation made of closures ==")
        var db: OpaquePointer?
        guard sqlite3_open(":memory:", &db) == SQLITE_OK, let db else { return print("could not open SQLite") }
        defer { sqlite3_close(db) }
        do {
            // 1. A Swift array becomes the table `planets` (eponymous: no CREATE VIRTUAL TABLE).
            let planets = ArrayVirtualTable(name: "planets", columns: ["name", "kind", "moons"], rows: [
                ["Mercury", "rocky", 0], ["Venus", "rocky", 0], ["Earth", "rocky", 1], ["Mars", "rocky", 2],
                ["Jupiter", "gas", 95], ["Saturn", "gas", 146], ["Uranus", "ice", 28], ["Neptune", "ice", 16],
            ])
            try planets.register(on: db)
            show(db, "SELECT name, moons FROM planets WHERE moons > 10 ORDER BY moons DESC")

            // 2. xBestIndex passes `kind = 'ice'` to xFilter, which walks only the matching rows.
            planets.resetStatistics()
            show(db, "SELECT name FROM planets WHERE kind = 'ice' ORDER BY name")
            print("  xFilter scans: \(planets.scans), rows visited: \(planets.rowsVisited) of \(planets.rows.count)")

            // 3. A join with an ordinary table.
            _ = try sqliteQuery(db, "CREATE TABLE kinds(kind TEXT PRIMARY KEY, label TEXT)")
            _ = try sqliteQuery(db, "INSERT INTO kinds VALUES ('rocky', 'terrestrial'), ('gas', 'gas giant'), ('ice', 'ice giant')")
            show(db, "SELECT k.label, count(*), sum(p.moons) FROM planets p JOIN kinds k USING (kind) GROUP BY k.label ORDER BY 2 DESC")

            // 4. A scalar function and a collation, each a closure SQLite owns and frees.
            try SQLiteFunctions.createFunction("moon_class", argumentCount: 1, on: db) { arguments in
                guard case .integer(let moons) = arguments[0] else { return .null }
                return .text(moons == 0 ? "none" : moons < 20 ? "few" : "many")
            }
            try SQLiteFunctions.createCollation("by_length", on: db) { a, b in a.count != b.count ? a.count < b.count : a < b }
            show(db, "SELECT name, moon_class(moons) FROM planets ORDER BY name COLLATE by_length")
        } catch {
            print("error:", error)
        }
    }

    static func show(_ db: OpaquePointer, _ sql: String) {
        print(sql)
        do {
            for row in try sqliteQuery(db, sql) { print("  " + row.joined(separator: " | ")) }
        } catch {
            print("  error:", error)
        }
    }
}
