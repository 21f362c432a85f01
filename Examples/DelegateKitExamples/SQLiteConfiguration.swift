import DelegateKitCSQLite
import DelegateKit
import Synchronization

/// SQLite's process-wide settings, made from Swift alone. `sqlite3_config` is variadic, which Swift does
/// not import, so it is called through a ``CFunction``.
///
/// Most options may only be set while SQLite is not initialized: no connection may be open, on any
/// thread, while ``reconfigure(_:)`` runs.
public enum SQLiteConfiguration {
    private static let config = Result { try CFunction("sqlite3_config", declaration: "int sqlite3_config(int, ...)") }

    /// `sqlite3_config(option, arguments...)`; returns SQLite's status.
    public static func set<each A: CValue>(_ option: Int32, _ argument: repeat each A) throws -> Int32 {
        try config.get().call(option, repeat each argument)
    }

    /// Shuts SQLite down, runs `change` (calls of ``set(_:_:)``) and initializes SQLite again.
    public static func reconfigure(_ change: () throws -> Void) throws {
        guard sqlite3_shutdown() == SQLITE_OK else { throw SQLiteConfigurationError.status(SQLITE_MISUSE) }
        defer { sqlite3_initialize() }
        try change()
    }
}

/// A `sqlite3_config` call SQLite refused, with its status.
public enum SQLiteConfigurationError: Error, Equatable {
    /// SQLite's status (`SQLITE_MISUSE` when it is in use).
    case status(Int32)
}

/// SQLite's allocator wrapped by a `TypedDelegate<sqlite3_mem_methods>`: every call goes on to the allocator
/// that was installed (the default one), and the delegate counts allocations on the way.
public final class CountingAllocator: @unchecked Sendable {  // `original` is written only in init.
    /// The wrapped table SQLite copies when the allocator is installed.
    public let methods: TypedDelegate<sqlite3_mem_methods>
    /// The allocator that was installed before; SQLite gets it back from ``uninstall()``.
    private let original: UnsafeMutablePointer<sqlite3_mem_methods>
    /// Shared with the closures, which must not hold the allocator itself (it holds them).
    private let counts = Counts()

    private final class Counts: Sendable {
        let allocations = Atomic<Int>(0)
        let live = Atomic<Int>(0)

        func allocated() {
            allocations.add(1, ordering: .relaxed)
            live.add(1, ordering: .relaxed)
        }
    }

    /// How many blocks SQLite has allocated through this allocator.
    public var allocationCount: Int { counts.allocations.load(ordering: .relaxed) }
    /// How many of them it has not freed.
    public var liveCount: Int { counts.live.load(ordering: .relaxed) }

    /// Wraps the allocator SQLite has now (read with `SQLITE_CONFIG_GETMALLOC`). No connection may be
    /// open.
    public init() throws {
        let original = UnsafeMutablePointer<sqlite3_mem_methods>.allocate(capacity: 1)
        original.initialize(to: sqlite3_mem_methods())
        self.original = original
        var status = SQLITE_OK
        try SQLiteConfiguration.reconfigure { status = try SQLiteConfiguration.set(SQLITE_CONFIG_GETMALLOC, original) }
        guard status == SQLITE_OK else {
            original.deallocate()
            throw SQLiteConfigurationError.status(status)
        }
        methods = TypedDelegate(for: sqlite3_mem_methods.self, wrapping: original)
        try methods.override(\.xMalloc) { [counts] (next: Next<Int32, UnsafeMutableRawPointer?>, size: Int32) -> UnsafeMutableRawPointer? in
            let block = next(size)
            if block != nil { counts.allocated() }
            return block
        }
        try methods.override(\.xRealloc) { [counts] (next: Next<UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?>,
                                                                block: UnsafeMutableRawPointer?, size: Int32) -> UnsafeMutableRawPointer? in
            let moved = next(block, size)
            if block == nil && moved != nil { counts.allocated() }
            return moved
        }
        try methods.override(\.xFree) { [counts] (next: Next<UnsafeMutableRawPointer?, Void>, block: UnsafeMutableRawPointer?) in
            if block != nil { counts.live.subtract(1, ordering: .relaxed) }
            next(block)
        }
    }

    deinit {
        original.deinitialize(count: 1)
        original.deallocate()
    }

    /// Makes this SQLite's allocator (SQLite copies the table; keep the allocator alive until
    /// ``uninstall()``). No connection may be open.
    public func install() throws {
        try SQLiteConfiguration.reconfigure {
            let status = try SQLiteConfiguration.set(SQLITE_CONFIG_MALLOC, UnsafePointer(methods.typedTable))
            guard status == SQLITE_OK else { throw SQLiteConfigurationError.status(status) }
        }
    }

    /// Gives SQLite back the allocator it had before. No connection may be open.
    public func uninstall() throws {
        try SQLiteConfiguration.reconfigure {
            let status = try SQLiteConfiguration.set(SQLITE_CONFIG_MALLOC, UnsafePointer(original))
            guard status == SQLITE_OK else { throw SQLiteConfigurationError.status(status) }
        }
    }

    /// Whether SQLite's allocator now is the one this wraps (its `xMalloc` is the original's). No
    /// connection may be open: SQLite answers only while shut down.
    public func originalIsInstalled() throws -> Bool {
        var now = sqlite3_mem_methods()
        var status = SQLITE_OK
        try SQLiteConfiguration.reconfigure {
            status = try withUnsafeMutablePointer(to: &now) { try SQLiteConfiguration.set(SQLITE_CONFIG_GETMALLOC, $0) }
        }
        guard status == SQLITE_OK else { throw SQLiteConfigurationError.status(status) }
        return unsafeBitCast(now.xMalloc, to: UnsafeRawPointer?.self) == unsafeBitCast(original.pointee.xMalloc, to: UnsafeRawPointer?.self)
    }
}

/// SQLite's error log (`SQLITE_CONFIG_LOG`) delivered to a Swift closure.
public final class SQLiteLog: Sendable {
    private let callback: CClosure

    /// Sends every message SQLite logs to `handler`, with its result code, from here on. No connection
    /// may be open. Keep the value until ``remove()``.
    public init(_ handler: @escaping @Sendable (_ code: Int32, _ message: String) -> Void) throws {
        callback = try CClosure { (_: UnsafeMutableRawPointer?, code: Int32, message: UnsafePointer<CChar>?) in
            handler(code, message.map { String(cString: $0) } ?? "")
        }
        try SQLiteConfiguration.reconfigure {
            let status = try SQLiteConfiguration.set(SQLITE_CONFIG_LOG, callback.address, UnsafeMutableRawPointer?.none)
            guard status == SQLITE_OK else { throw SQLiteConfigurationError.status(status) }
        }
    }

    /// Stops logging to the closure. No connection may be open.
    public func remove() throws {
        try SQLiteConfiguration.reconfigure {
            _ = try SQLiteConfiguration.set(SQLITE_CONFIG_LOG, UnsafeRawPointer?.none, UnsafeMutableRawPointer?.none)
        }
    }
}
