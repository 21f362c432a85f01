// The examples of the README and the DocC catalog about tables. Each region between `// doc:begin NAME`
// and `// doc:end` appears verbatim in a ```swift block of the docs.
import DelegateKit
import Glibc
import Synchronization

/// Getting Started's table: `glob(3)` with `GLOB_ALTDIRFUNC` reads directories through the function
/// pointers of its `glob_t`, here closures that count the directories opened. Returns the number of
/// matches of `pattern` and that count.
public func globThroughClosures(_ pattern: String) throws -> (matches: Int, opened: Int) {
    // doc:begin glob
    let listing = TypedDelegate(for: glob_t.self)     // glob_t's function-pointer members are its slots
    let opened = Atomic<Int>(0)
    try listing.implement(\.gl_opendir) { (path: UnsafePointer<CChar>?) -> UnsafeMutableRawPointer? in
        opened.add(1, ordering: .relaxed)
        return UnsafeMutableRawPointer(opendir(path!))
    }
    try listing.implement(\.gl_readdir) { (dir: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in
        UnsafeMutableRawPointer(readdir(OpaquePointer(dir!)))
    }
    try listing.implement(\.gl_closedir) { (dir: UnsafeMutableRawPointer?) in _ = closedir(OpaquePointer(dir!)) }
    try listing.implement(\.gl_stat) { (path: UnsafePointer<CChar>?, buf: UnsafeMutableRawPointer?) -> Int32 in
        stat(path!, buf!.assumingMemoryBound(to: stat.self))
    }
    try listing.implement(\.gl_lstat) { (path: UnsafePointer<CChar>?, buf: UnsafeMutableRawPointer?) -> Int32 in
        lstat(path!, buf!.assumingMemoryBound(to: stat.self))
    }
    glob(pattern, GLOB_ALTDIRFUNC, nil, listing.typedTable)    // glob also fills the data members
    let matches = Int(listing.typedTable.pointee.gl_pathc)
    globfree(listing.typedTable)
    // doc:end
    return (matches, opened.load(ordering: .relaxed))
}

/// `cookie_io_functions_t` (glibc's `fopencookie` table), described by hand: Swift's Glibc module does not
/// declare it.
let cookieIO = ProtocolDescriptor(name: "cookie_io_functions_t", methods: [
    MethodDescriptor(name: "read", signature: CSignature(.int64, [.pointer, .pointer, .size])),
    MethodDescriptor(name: "write", signature: CSignature(.int64, [.pointer, .pointer, .size])),
    MethodDescriptor(name: "seek", signature: CSignature(.int32, [.pointer, .pointer, .int32])),
    MethodDescriptor(name: "close", signature: CSignature(.int32, [.pointer]), isRequired: true),
])

/// The README's callback table (and the Delegates article's): a table described by hand, filled and
/// validated; then called through its slot as C would and emptied again (Delegates); then a table with a
/// data member read from C text (Signatures). Returns what the read slot returned and the data member's value.
public func describeAndFillTables() throws -> (read: Int, version: Int32) {
    // doc:begin cookie-io
    let cookieIO = ProtocolDescriptor(name: "cookie_io_functions_t", methods: [
        MethodDescriptor(name: "read",  signature: try CSignature(parsing: "ssize_t (void *, char *, size_t)")),
        MethodDescriptor(name: "write", signature: try CSignature(parsing: "ssize_t (void *, const char *, size_t)")),
        MethodDescriptor(name: "seek",  signature: try CSignature(parsing: "int (void *, int64_t *, int)")),
        MethodDescriptor(name: "close", signature: try CSignature(parsing: "int (void *)"), isRequired: true),
    ])
    assert(cookieIO.size == 32 && cookieIO.methods[1].offset == 8)   // laid out as C does

    let d = DynamicDelegate(protocol: cookieIO)
    try d.implement("read") { (cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        memset(buf!, 0x2A, n)                       // n bytes of "*"
        return n
    }
    try d.implement("close") { (cookie: UnsafeMutableRawPointer?) -> Int32 in 0 }
    assert(d.responds(to: "read") && !d.responds(to: "seek"))   // "seek"'s slot in d.table is NULL
    try d.validate()                      // throws when a required method has no implementation
    // doc:end

    // doc:begin implementation-for
    // A slot's current implementation as a typed Swift function (it calls the C pointer, as C would):
    let read = try d.implementation(for: "read", as: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int).self)
    var buffer = [CChar](repeating: 0, count: 4)
    let count = read?(nil, &buffer, 4)                            // 4, buffer == "****"
    d.removeImplementation(for: "read")                           // the slot reads NULL again
    // doc:end

    // doc:begin parsing
    // Read a table straight from a header's declarations (typedefs, struct definitions, enums, comments):
    let header = """
        typedef long long sqlite3_int64;
        struct plugin {
            int iVersion;                                   /* a data member */
            int (*xRead)(void *file, void *buffer, int iAmt, sqlite3_int64 iOfst);
            void (*xClose)(void *file);
        };
        """
    let plugin = try ProtocolDescriptor(parsing: header, name: "plugin")
    let p = DynamicDelegate(protocol: plugin)
    try p.setField("iVersion", Int32(3))                  // data members are set by name, type-checked
    let xRead = try CSignature(parsing: "int (*)(sqlite3_file *, void *, int iAmt, sqlite3_int64 iOfst)",
                               typedefs: ["sqlite3_int64": .int64])
    assert(plugin.method(named: "xRead")?.signature == xRead)
    // doc:end
    return (count ?? -1, try p.field("iVersion", as: Int32.self))
}

/// The README's variadic member: a logging table whose `log` is `printf`-like. Returns the delegate and a
/// way to read what its `log` heard.
public func loggingTable() throws -> (delegate: DynamicDelegate, heard: @Sendable () -> [String]) {
    let lines = Mutex<[String]>([])
    // doc:begin variadic-member
    let logging = try ProtocolDescriptor(parsing: """
        struct log_methods {
            void (*log)(void *context, const char *format, ...);   /* variadic: a method all the same */
            void (*flush)(void *context);
        };
        """, name: "log_methods")
    let d = DynamicDelegate(protocol: logging)
    try d.implement("log") { (context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
        let line = arguments.formatted(format!)
        lines.withLock { $0.append(line) }
    }
    // logging.method(named: "log")?.signature: `void (void *, void *, ...)`, isVariadic
    // doc:end
    return (d, { lines.withLock { $0 } })
}
