#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A shared library opened with `dlopen`, or the running process, in which ``CFunction`` finds symbols.
///
/// The library stays open while the value or any ``CFunction`` found in it is alive, and is closed when
/// the last of them goes away.
///
/// ```swift
/// let sqlite = try CLibrary(path: "libsqlite3.so.0")
/// let version = try CFunction("sqlite3_libversion_number", declaration: "int (void)", in: sqlite)
/// let number: Int32 = try version.call()
/// ```
public final class CLibrary: @unchecked Sendable {  // Immutable; dlsym and dlclose are thread-safe.
    /// The path the library was opened with; nil for the process itself.
    let path: String?
    private let handle: UnsafeMutableRawPointer

    /// Opens the shared library at `path` (a file name alone is looked up the way `dlopen` looks it up)
    /// and binds its symbols now, so that a missing dependency is reported here rather than at a call.
    ///
    /// Throws ``DelegateError/libraryNotFound(path:reason:)`` quoting `dlerror()`.
    public init(path: String) throws {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw DelegateError.libraryNotFound(path: path, reason: CLibrary.lastError())
        }
        self.path = path
        self.handle = handle
    }

    private init(process handle: UnsafeMutableRawPointer) {
        path = nil
        self.handle = handle
    }

    /// The running program and every library it has loaded, searched in load order (`dlopen(NULL)`):
    /// the C library's functions are found here.
    ///
    /// The executable's own C functions (a C target of your package linked into it) are not: an
    /// executable exports no symbols unless linked with `--export-dynamic`, which SwiftPM does not do.
    /// Take such a function's address instead:
    ///
    /// ```swift
    /// let address = unsafeBitCast(my_function as @convention(c) (Int32) -> Int32, to: UnsafeRawPointer.self)
    /// let function = try CFunction(address: address, declaration: "int my_function(int)")
    /// ```
    public static let process: CLibrary = {
        guard let handle = dlopen(nil, RTLD_NOW) else { fatalError("DelegateKit: dlopen(NULL) failed: \(lastError())") }
        return CLibrary(process: handle)
    }()

    deinit {
        dlclose(handle)
    }

    /// The address of `symbol`.
    ///
    /// Throws ``DelegateError/symbolNotFound(_:library:reason:)`` quoting `dlerror()`.
    public func address(of symbol: String) throws -> UnsafeRawPointer {
        // A symbol may legitimately be NULL; only dlerror tells a missing one apart. It is per thread, so
        // clearing it first is enough.
        _ = dlerror()
        let address = dlsym(handle, symbol)
        if let address { return UnsafeRawPointer(address) }
        let reason = CLibrary.lastError()
        throw DelegateError.symbolNotFound(
            symbol, library: path.map { "'\($0)'" } ?? "the process",
            reason: reason.isEmpty ? "the symbol's value is NULL" : reason)
    }

    private static func lastError() -> String {
        dlerror().map { String(cString: $0) } ?? ""
    }
}

extension CLibrary: CustomStringConvertible {
    /// The path in quotes, or "the process".
    public var description: String { path.map { "CLibrary('\($0)')" } ?? "CLibrary.process" }
}
