// The examples of the README and the DocC catalog about typed tables, wrapper classes, stacks, observers,
// forwarding and lifetimes. Each region between `// doc:begin NAME` and `// doc:end` appears verbatim in
// a ```swift block of the docs; regions may nest.
import DelegateKitCLibXML2
import DelegateKitCSQLite
import DelegateKit
import Glibc
import Synchronization

/// The `TypedDelegate` examples: SQLite's `sqlite3_io_methods` filled by key path and called as SQLite
/// would (Delegates), the default VFS wrapped (Stacks, Wrapping and Observers), and a `BlockDelegate` for
/// libxml2's SAX handler (Block Delegates). Returns what the `xRead` slot returned.
public func typedTables() throws -> Int32 {
    // doc:begin typed-io
    let io = TypedDelegate(for: sqlite3_io_methods.self)      // a DynamicDelegate subclass
    try io.implement(\.xRead) { (file: UnsafeMutablePointer<sqlite3_file>?, buf: UnsafeMutableRawPointer?,
                                 n: Int32, offset: sqlite3_int64) -> Int32 in
        memset(buf!, 0, Int(n))                               // a file of zeros
        return SQLITE_OK
    }
    io.typedTable.pointee.iVersion = 1                        // data members: through the typed pointer
    var file = sqlite3_file(pMethods: UnsafePointer(io.typedTable))   // as an xOpen sets it
    var page = [UInt8](repeating: 1, count: 16)
    let status = file.pMethods.pointee.xRead(&file, &page, 16, 0)      // SQLite calls it so
    // doc:end

    // doc:begin typed-wrapping
    typealias OpenNext = Next<UnsafeMutablePointer<sqlite3_vfs>?, UnsafePointer<CChar>?,
                              UnsafeMutablePointer<sqlite3_file>?, Int32, UnsafeMutablePointer<Int32>?, Int32>
    let wrapped = TypedDelegate(for: sqlite3_vfs.self, wrapping: sqlite3_vfs_find(nil)!)
    try wrapped.override(\.xOpen) { (next: OpenNext, vfs: UnsafeMutablePointer<sqlite3_vfs>?, name: UnsafePointer<CChar>?,
                                     file: UnsafeMutablePointer<sqlite3_file>?, flags: Int32,
                                     outFlags: UnsafeMutablePointer<Int32>?) -> Int32 in
        next(vfs, name, file, flags, outFlags)                // the default VFS's own xOpen
    }
    // doc:end

    // doc:begin sax
    final class SAX: BlockDelegate {                          // block delegates, too
        @Slot(\xmlSAXHandler.characters) var onCharacters: ((UnsafeMutableRawPointer?, UnsafePointer<xmlChar>?, Int32) -> Void)?
        init() throws { try super.init(for: xmlSAXHandler.self) }
    }
    // doc:end
    let sax = try SAX()
    sax.table.assumingMemoryBound(to: xmlSAXHandler.self).pointee.initialized = XML_SAX2_MAGIC
    sax.onCharacters = { _, _, _ in }
    precondition(sax.dynamicDelegate.responds(to: "characters") && wrapped.responds(to: "xOpen"))
    return status
}

/// The Delegates article's key-path `implement` and `override` and `methodName(of:)`, on the
/// `sqlite3_io_methods` table of `typedTables()`, called as SQLite would. Returns what the calls returned,
/// the reads the override saw, whether the size key is registered, and whether xRead is empty once
/// removed by name.
public func keyPathSlots() throws -> (size: sqlite3_int64, sector: Int32, status: Int32, reads: Int, sized: Bool, emptied: Bool) {
    let io = TypedDelegate(for: sqlite3_io_methods.self)
    try io.implement(\.xRead) { (file: UnsafeMutablePointer<sqlite3_file>?, buf: UnsafeMutableRawPointer?,
                                 n: Int32, offset: sqlite3_int64) -> Int32 in
        memset(buf!, 0, Int(n))
        return SQLITE_OK
    }
    // doc:begin typed-implement
    try io.implement(\.xFileSize, key: "size") { (file: UnsafeMutablePointer<sqlite3_file>?,
                                                  size: UnsafeMutablePointer<sqlite3_int64>?) -> Int32 in
        size!.pointee = 4096                                  // every file is one page long
        return SQLITE_OK
    }
    // doc:end
    #if compiler(>=6.3)
    // doc:begin typed-implement-inferred
    try io.implement(\.xSectorSize) { file in 512 }          // Swift 6.3 and later: the member's types
    // doc:end
    #else
    try io.implement(\.xSectorSize) { (file: UnsafeMutablePointer<sqlite3_file>?) -> Int32 in 512 }
    #endif
    // doc:begin typed-override
    typealias ReadNext = Next<UnsafeMutablePointer<sqlite3_file>?, UnsafeMutableRawPointer?, Int32, sqlite3_int64, Int32>
    let reads = Atomic<Int>(0)
    try io.override(\.xRead) { (next: ReadNext, file: UnsafeMutablePointer<sqlite3_file>?, buf: UnsafeMutableRawPointer?,
                                n: Int32, offset: sqlite3_int64) -> Int32 in
        reads.add(1, ordering: .relaxed)
        return next(file, buf, n, offset)                     // the xRead implemented before
    }
    // doc:end

    var file = sqlite3_file(pMethods: UnsafePointer(io.typedTable))
    var size: sqlite3_int64 = 0
    _ = file.pMethods.pointee.xFileSize(&file, &size)
    let sector = file.pMethods.pointee.xSectorSize(&file)

    var page = [UInt8](repeating: 1, count: 16)
    let status = file.pMethods.pointee.xRead(&file, &page, 16, 0)

    // doc:begin method-name
    let xRead = try io.methodName(of: \.xRead)                // "xRead", the name the by-name API takes
    let token = try io.observe(xRead, .after) { (file: UnsafeMutablePointer<sqlite3_file>?, buf: UnsafeMutableRawPointer?,
                                                 n: Int32, offset: sqlite3_int64) in
        print("xRead of \(n) bytes at \(offset)")
    }
    let sized = io.hasImplementation(for: try io.methodName(of: \.xFileSize), key: "size")   // true
    token.cancel()
    io.removeImplementation(for: xRead)                       // the whole stack, both layers: NULL again
    // doc:end
    return (size, sector, status, reads.load(ordering: .relaxed), sized, io.typedTable.pointee.xRead == nil && !io.responds(to: xRead))
}

/// The Block Delegates article's first class, set and emptied. Returns whether
/// "read" responds after its property was set to nil (false).
public func blockDelegateProperties() throws -> Bool {
    // doc:begin block
    final class CookieStream: BlockDelegate {
        @Slot("read")  var onRead:  ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int)?
        @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int32)?
        init() throws { try super.init(protocol: cookieIO) }
    }
    let s = try CookieStream()
    s.onRead = { _, _, n in n }      // implements "read"
    s.onRead = nil                   // empties the slot
    assert(!s.dynamicDelegate.responds(to: "read"))   // s.table is what C gets
    // doc:end
    return s.dynamicDelegate.responds(to: "read")
}

/// The README's stacks and keys on a `cookie_io_functions_t` delegate. Returns what C's read slot returns
/// once the `once` entry has served its call and nothing lies below the override (0).
public func stacksAndKeys() throws -> Int {
    let d = DynamicDelegate(protocol: cookieIO)
    // doc:begin stacks
    let a = try d.implement("read", key: "logging") { (cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        n                                                      // returns a Registration
    }
    try d.override("read", key: "cache") { (next: Next<UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int, Int>,
                                            cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        next.isAvailable ? next(cookie, buf, n) : 0            // the implementation below
    }
    assert(d.hasImplementation(for: "read", key: "cache"))
    a.remove()                                                 // or d.removeImplementation(for: "read", key: "logging")
    try d.implement("read", once: true) { (cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        -1                                                     // serves exactly one call, then removes itself
    }
    // doc:end
    let read = try d.implementation(for: "read", as: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int).self)!
    precondition(read(nil, nil, 8) == -1)
    return read(nil, nil, 8)
}

/// The Stacks article's override, which counts what the layers below read. Returns the count after one
/// call of 5 bytes.
public func overrideCallingNext() throws -> Int {
    let d = DynamicDelegate(protocol: cookieIO)
    try d.implement("read") { (cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, n: Int) -> Int in n }
    // doc:begin override
    let bytesRead = Atomic<Int>(0)
    try d.override("read") { (next: Next<UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int, Int>,
                              cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        let count = next(cookie, buffer, n)
        bytesRead.add(count, ordering: .relaxed)
        return count
    }
    // doc:end
    let read = try d.implementation(for: "read", as: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int).self)!
    _ = read(nil, nil, 5)
    return bytesRead.load(ordering: .relaxed)
}

/// The README's wrapping of a live C table: SQLite's default VFS, described from its imported struct,
/// its `xOpen` overridden to count opens. Returns the number of opens while a database was opened.
public func wrapDefaultVFS() throws -> Int {
    // doc:begin wrapping
    let base = sqlite3_vfs_find(nil)!
    let traced = DynamicDelegate(protocol: ProtocolDescriptor(for: sqlite3_vfs.self), wrapping: UnsafeRawPointer(base))
    let opens = Atomic<Int>(0)
    try traced.override("xOpen") { (next: Next<OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, Int32, UnsafeMutablePointer<Int32>?, Int32>,
                                    vfs: OpaquePointer?, name: UnsafePointer<CChar>?, file: OpaquePointer?,
                                    flags: Int32, outFlags: UnsafeMutablePointer<Int32>?) -> Int32 in
        let status = next(vfs, name, file, flags, outFlags)      // the original xOpen
        opens.add(1, ordering: .relaxed)
        return status
    }
    // doc:end
    let vfs = traced.table.assumingMemoryBound(to: sqlite3_vfs.self)
    let name = strdup("docs-traced")!
    defer { free(name) }
    vfs.pointee.zName = UnsafePointer(name)
    vfs.pointee.pNext = nil
    guard sqlite3_vfs_register(vfs, 0) == SQLITE_OK else { return -1 }
    defer { sqlite3_vfs_unregister(vfs) }
    let path = "/tmp/delegatekit-docs-\(getpid()).sqlite"
    defer { unlink(path) }
    var db: OpaquePointer?
    sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "docs-traced")
    sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nil, nil, nil)
    sqlite3_close(db)
    return opens.load(ordering: .relaxed)
}

/// The README's observers and forwarding chain. Returns the writes the observers saw and whether `top`
/// responds to "read" through its chain.
public func observersAndForwarding() throws -> (writes: Int, forwarded: Bool) {
    let d = DynamicDelegate(protocol: cookieIO)
    try d.implement("write") { (cookie: UnsafeMutableRawPointer?, buf: UnsafePointer<CChar>?, n: Int) -> Int in n }
    final class Session {}
    let session = Session()
    // doc:begin observers
    let writes = Atomic<Int>(0)
    let token = try d.observe("write", .after) { (cookie: UnsafeMutableRawPointer?, buf: UnsafePointer<CChar>?, n: Int) in
        writes.add(1, ordering: .relaxed)
    }
    let results = try d.observeResult("write") { (written: Int, cookie: UnsafeMutableRawPointer?, buf: UnsafePointer<CChar>?, n: Int) in
        assert(written == n)
    }
    let all = d.observeAll { call in print(call) }                 // "write(0x…, 0x…, 12) -> 12"
    let reads = try d.observe("read", .before, owner: session) { (cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) in
    }                                              // ends when `session` is deinitialized (or `reads` is)
    token.cancel()                                                 // also cancelled when the token is deinitialized
    // doc:end
    all.cancel()
    reads.cancel()
    let write = try d.implementation(for: "write", as: ((UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Int).self)!
    _ = write(nil, nil, 3)
    results.cancel()

    // doc:begin forwarding
    let middle = DynamicDelegate(protocol: cookieIO), top = DynamicDelegate(protocol: cookieIO)
    try middle.implement("read") { (cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) -> Int in 0 }
    try top.setForwardingTarget(.delegate(middle))                // or .table(pointer, descriptor)
    assert(top.responds(to: "read"))                               // reflects the whole chain, as it changes
    // doc:end
    return (writes.load(ordering: .relaxed), top.responds(to: "read"))
}

/// The README's lifetimes of single closures: a thread body released as its one call returns, and a
/// SQL function SQLite frees with its destroy notification. Returns what the thread stored and
/// `triple(14)`.
public func singleClosureLifetimes() throws -> (thread: Int, triple: Int64) {
    // doc:begin lifetimes
    let answer = Atomic<Int>(0)
    let body = try CCallback.oneShot { (argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in
        answer.store(42, ordering: .relaxed)
        return nil
    }                                                              // released as its one call returns
    var thread = pthread_t()
    pthread_create(&thread, nil, try body.functionPointer(), nil)
    pthread_join(thread, nil)

    var db: OpaquePointer?
    sqlite3_open(":memory:", &db)
    let triple = try NotifiedCallback { (ctx: OpaquePointer?, n: Int32, args: UnsafeMutablePointer<OpaquePointer?>?) in
        sqlite3_result_int64(ctx, 3 * sqlite3_value_int64(args![0]))
    }
    sqlite3_create_function_v2(db, "triple", 1, SQLITE_UTF8, triple.userData,
                               try triple.functionPointer(), nil, nil, triple.destroyNotify)   // freed by xDestroy
    // doc:end
    defer { sqlite3_close(db) }
    var statement: OpaquePointer?
    sqlite3_prepare_v2(db, "SELECT triple(14)", -1, &statement, nil)
    defer { sqlite3_finalize(statement) }
    guard sqlite3_step(statement) == SQLITE_ROW else { return (answer.load(ordering: .relaxed), -1) }
    return (answer.load(ordering: .relaxed), sqlite3_column_int64(statement, 0))
}

/// The README's owner-passing `implement` and throwing implementations. Returns what C's read slot
/// returns for 3 bytes, then for 10,000 bytes (the error's fallback).
public func ownerAndErrors() throws -> (Int, Int) {
    final class ByteStream: BlockDelegate {
        let bytes: [CChar] = Array("hello".utf8CString)
        func copy(into buffer: UnsafeMutablePointer<CChar>?, _ n: Int) -> Int {
            let count = min(n, bytes.count)
            bytes.withUnsafeBufferPointer { buffer?.update(from: $0.baseAddress!, count: count) }
            return count
        }
        init() throws { try super.init(protocol: cookieIO) }
    }
    let stream = try ByteStream()
    // doc:begin owner
    try stream.implement("read") { (stream: ByteStream, cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        stream.copy(into: buffer, n)                               // no capture of `stream`: no cycle
    }
    // doc:end
    var buffer = [CChar](repeating: 0, count: 8)
    let read = try stream.dynamicDelegate.implementation(
        for: "read", as: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int).self)!
    let small = read(nil, &buffer, 3)

    let d = DynamicDelegate(protocol: cookieIO)
    // doc:begin errors
    struct TooLarge: Error { let n: Int }
    try d.implement("read") { (cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        do {
            guard n <= 4096 else { throw TooLarge(n: n) }
            return 0
        } catch {
            print("read: \(error)")
            return -1                                              // what C gets
        }
    }
    // doc:end
    let failing = try d.implementation(for: "read", as: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int).self)!
    return (small, failing(nil, nil, 10_000))
}
