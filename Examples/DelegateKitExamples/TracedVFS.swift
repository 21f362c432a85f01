import DelegateKitCSQLite
import DelegateKit
import Foundation
import Glibc
import Synchronization

/// A SQLite VFS that wraps the default one: every method is the original until overridden. It counts
/// reads and writes, can fail the next write with an I/O error, and can trace every call.
///
/// ```swift
/// let traced = try TracedVFS(name: "traced")
/// sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "traced")
/// ```
public final class TracedVFS: @unchecked Sendable {  // The C name buffer is immutable; the rest is locked or atomic.
    /// The name the VFS is registered under.
    public let name: String
    /// The wrapper of the default VFS's `sqlite3_vfs`.
    public let vfs: TypedDelegate<sqlite3_vfs>

    private let readCount = Atomic<Int>(0)
    private let writeCount = Atomic<Int>(0)
    private let failWrite = Atomic<Bool>(false)
    /// One wrapper per original `sqlite3_io_methods` table the default VFS hands out.
    // NSLock rather than Mutex: ThreadSanitizer sees pthread mutexes, not Mutex's futexes.
    private let lock = NSLock()
    private var ioTables: [UInt: TypedDelegate<sqlite3_io_methods>] = [:]
    private let trace: (@Sendable (String) -> Void)?
    private var traceTokens: [ObservationToken] = []
    private let cName: UnsafeMutablePointer<CChar>

    /// The `xRead` calls so far.
    public var reads: Int { readCount.load(ordering: .relaxed) }
    /// The `xWrite` calls so far (a failed one included).
    public var writes: Int { writeCount.load(ordering: .relaxed) }

    /// The wrappers of the file method tables the default VFS has handed out so far (one per distinct
    /// table; SQLite's unix VFS uses one for every file), for adding layers of your own.
    public var fileMethods: [TypedDelegate<sqlite3_io_methods>] { lock.withLock { Array(ioTables.values) } }

    /// Wraps the default VFS and registers the wrapper as `name` (not as the default). `trace`, when
    /// given, hears every call of every VFS and file method.
    public init(name: String, trace: (@Sendable (String) -> Void)? = nil) throws {
        guard let base = sqlite3_vfs_find(nil) else { throw TracedVFSError.noDefaultVFS }
        self.name = name
        self.trace = trace
        cName = strdup(name)
        vfs = TypedDelegate(for: sqlite3_vfs.self, wrapping: base)
        vfs.typedTable.pointee.zName = UnsafePointer(cName)
        vfs.typedTable.pointee.pNext = nil

        typealias OpenNext = Next<UnsafeMutablePointer<sqlite3_vfs>?, UnsafePointer<CChar>?, UnsafeMutablePointer<sqlite3_file>?,
                                  Int32, UnsafeMutablePointer<Int32>?, Int32>
        // The default xOpen fills in the file's method table; swap in our wrapper of that table.
        try vfs.override(\.xOpen) { [unowned(unsafe) self] (next: OpenNext, vfs: UnsafeMutablePointer<sqlite3_vfs>?,
                                                             path: UnsafePointer<CChar>?, file: UnsafeMutablePointer<sqlite3_file>?,
                                                             flags: Int32, outFlags: UnsafeMutablePointer<Int32>?) -> Int32 in
            let status = next(vfs, path, file, flags, outFlags)
            if status == SQLITE_OK, let file, let methods = file.pointee.pMethods {
                file.pointee.pMethods = UnsafePointer(wrapper(of: methods).typedTable)
            }
            return status
        }
        if let trace { traceTokens.append(vfs.observeAll { trace("vfs  " + $0.description) }) }
        let status = sqlite3_vfs_register(vfs.typedTable, 0)
        guard status == SQLITE_OK else { throw TracedVFSError.sqlite(status) }
    }

    deinit {
        sqlite3_vfs_unregister(vfs.typedTable)
        free(cName)
    }

    /// Makes the next `xWrite` fail with `SQLITE_IOERR_WRITE` without writing anything.
    public func failNextWrite() { failWrite.store(true, ordering: .releasing) }

    private func wrapper(of methods: UnsafePointer<sqlite3_io_methods>) -> TypedDelegate<sqlite3_io_methods> {
        lock.withLock {
            if let existing = ioTables[UInt(bitPattern: methods)] { return existing }
            let io = TypedDelegate(for: sqlite3_io_methods.self, wrapping: methods)
            do {
                try io.override(\.xRead) { [unowned(unsafe) self] (next: Next<UnsafeMutablePointer<sqlite3_file>?, UnsafeMutableRawPointer?, Int32, Int64, Int32>,
                                                                   file: UnsafeMutablePointer<sqlite3_file>?, buffer: UnsafeMutableRawPointer?,
                                                                   amount: Int32, offset: Int64) -> Int32 in
                    readCount.add(1, ordering: .relaxed)
                    return next(file, buffer, amount, offset)
                }
                try io.override(\.xWrite) { [unowned(unsafe) self] (next: Next<UnsafeMutablePointer<sqlite3_file>?, UnsafeRawPointer?, Int32, Int64, Int32>,
                                                                    file: UnsafeMutablePointer<sqlite3_file>?, buffer: UnsafeRawPointer?,
                                                                    amount: Int32, offset: Int64) -> Int32 in
                    writeCount.add(1, ordering: .relaxed)
                    if failWrite.exchange(false, ordering: .acquiringAndReleasing) { return sqliteIOErrorWrite }
                    return next(file, buffer, amount, offset)
                }
            } catch {
                preconditionFailure("the closures above have the members' types: \(error)")
            }
            if let trace { traceTokens.append(io.observeAll { trace("file " + $0.description) }) }
            ioTables[UInt(bitPattern: methods)] = io
            return io
        }
    }
}

/// `SQLITE_IOERR_WRITE`: `SQLITE_IOERR | (3 << 8)`, a macro Swift does not import.
let sqliteIOErrorWrite = SQLITE_IOERR | (3 << 8)

/// Why a ``TracedVFS`` could not be made.
public enum TracedVFSError: Error {
    /// SQLite has no default VFS.
    case noDefaultVFS
    /// SQLite refused the registration with this status.
    case sqlite(Int32)
}
