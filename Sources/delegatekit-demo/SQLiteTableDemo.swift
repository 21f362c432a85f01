// Placeholder until the SQLite virtual table example lands (being written now).
enum SQLiteTableDemo { static func run() { print("sqlite example: not written yet") } }
