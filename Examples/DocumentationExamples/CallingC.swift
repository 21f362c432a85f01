// The examples of the README and the DocC catalog about calling C functions Swift cannot call, and about
// scoped lifetimes. Each region between `// doc:begin NAME` and `// doc:end` appears verbatim in a
// ```swift block of the docs.
import DelegateKitCSQLite
import DelegateKit
import Glibc

/// `snprintf` called from Swift, which does not import variadic functions. Returns the formatted text
/// (`"42 apples at 1.50"`).
public func formatWithSnprintf() throws -> String {
    // doc:begin cfunction
    let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
    var buffer = [CChar](repeating: 0, count: 64)
    let written: Int32 = try "%d %s at %.2f".withCString { format in
        try "apples".withCString { fruit in
            try buffer.withUnsafeMutableBufferPointer { text in
                // After the format: an int, a char *, and a float that C's promotions pass as a double.
                try snprintf.call(text.baseAddress, text.count, format, Int32(42), fruit, Float(1.5))
            }
        }
    }
    // written == 17, buffer holds "42 apples at 1.50"
    // doc:end
    return String(decoding: buffer.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A per-connection SQLite setting through the variadic `sqlite3_db_config`, from a library opened by
/// path. Returns what SQLite reports the setting is afterwards (1).
public func enableForeignKeys() throws -> Int32 {
    var db: OpaquePointer?
    sqlite3_open(":memory:", &db)
    defer { sqlite3_close(db) }
    // doc:begin cfunction-library
    let sqlite = try CLibrary(path: "libsqlite3.so.0")                   // dlopen; closed when unused
    let dbConfig = try CFunction(
        "sqlite3_db_config", declaration: "int sqlite3_db_config(struct sqlite3 *, int, ...)", in: sqlite)
    var enabled: Int32 = -1
    let status: Int32 = try withUnsafeMutablePointer(to: &enabled) { reply in
        try dbConfig.call(db, SQLITE_DBCONFIG_ENABLE_FKEY, Int32(1), reply)
    }
    // status == SQLITE_OK, enabled == 1
    // doc:end
    return status == SQLITE_OK ? enabled : -1
}

/// A function found at run time and called with run-time values. Returns `labs(-7)` (`.signed(7)`).
public func callWithRunTimeValues() throws -> CDynamicValue {
    // doc:begin cfunction-dynamic
    let labs = try CFunction("labs", declaration: "long labs(long)")
    let seven = try labs.call([.signed(-7)])                             // .signed(7)
    // doc:end
    return seven
}

/// Run-time values of other kinds: `ldexp(0.5, 4)` and `strtoul("ff", NULL, 16)`.
public func callWithOtherRunTimeValues() throws -> (eight: CDynamicValue, parsed: CDynamicValue) {
    // doc:begin cfunction-dynamic-kinds
    let ldexp = try CFunction("ldexp", declaration: "double ldexp(double, int)")
    let eight = try ldexp.call([.floatingPoint(0.5), .signed(4)])       // .floatingPoint(8.0)
    let strtoul = try CFunction("strtoul", declaration: "unsigned long strtoul(const char *, char **, int)")
    let parsed = try "ff".withCString { text in
        try strtoul.call([.pointer(UInt(bitPattern: text)), .pointer(0), .signed(16)])   // .unsigned(255)
    }
    // doc:end
    return (eight, parsed)
}

/// C's complex numbers, which Swift imports no function for: `cexp(iπ)` and `cabs(3 + 4i)`.
public func complexExponential() throws -> (e: CComplex<Double>, length: Double) {
    // doc:begin complex
    let cexp = try CFunction("cexp", declaration: "double complex cexp(double complex)")
    let e = try cexp.call(CComplex(0.0, Double.pi), returning: CComplex<Double>.self)   // -1 + 1.2e-16i
    let cabs = try CFunction("cabs", declaration: "double cabs(double complex)")
    let length = try cabs.call([.complex(real: 3, imaginary: 4)])                      // .floatingPoint(5)
    // doc:end
    guard case .floatingPoint(let value) = length else { return (e, .nan) }
    return (e, value)
}

/// `qsort` called through a `CFunction` with a `@convention(c)` comparator (typed call), then with a
/// `CClosure` (run-time values). Returns the numbers after each sort.
public func sortThroughCFunction() throws -> (ascending: [Int32], descending: [Int32]) {
    // doc:begin cfunction-callbacks
    let qsort = try CFunction("qsort", declaration: "void qsort(void *, size_t, size_t, int (*)(const void *, const void *))")
    let ascending: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32 = { a, b in
        let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
        return x < y ? -1 : x > y ? 1 : 0
    }
    let descending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
        let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
        return x < y ? 1 : x > y ? -1 : 0
    }
    var numbers: [Int32] = [3, 9, -4, 7]
    try numbers.withUnsafeMutableBytes { bytes in
        try qsort.call(bytes.baseAddress, bytes.count / 4, 4, ascending)                   // [-4, 3, 7, 9]
    }
    try numbers.withUnsafeMutableBytes { bytes in
        let base = CDynamicValue.pointer(UInt(bitPattern: bytes.baseAddress))
        _ = try qsort.call([base, .unsigned(4), .unsigned(4), .function(descending)])   // [9, 7, 3, -4]
    }
    // doc:end
    var sortedUp = numbers
    try sortedUp.withUnsafeMutableBytes { bytes in try qsort.call(bytes.baseAddress, bytes.count / 4, 4, ascending) }
    return (sortedUp, numbers)
}

/// `qsort` inside a callback scope, then with a closure kept for one call. Returns both results.
public func sortInScopes() throws -> (ascending: [Int32], descending: [Int32]) {
    var numbers: [Int32] = [3, 1, 2]
    // doc:begin callback-scope
    try withCallbackScope {
        let ascending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
            return x < y ? -1 : x > y ? 1 : 0
        }
        qsort(&numbers, numbers.count, 4, try ascending.functionPointer())  // alive until the scope ends
    }                                                                    // freed here, with all made inside
    // doc:end
    let ascending = numbers
    // doc:begin with-function-pointer
    let descending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
        let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
        return x < y ? 1 : x > y ? -1 : 0
    }
    try withExtendedLifetime(descending) {                              // alive until qsort returns
        qsort(&numbers, numbers.count, 4, try descending.functionPointer())
    }
    // doc:end
    return (ascending, numbers)
}
