import DelegateKitFixtures

/// Debian's multiarch names: where the system keeps what differs by CPU, so that tests reading glibc's own
/// headers read the ones the test binary was compiled against, on x86_64 and on aarch64 alike.
enum Multiarch {
    #if arch(x86_64)
    static let triplet = "x86_64-linux-gnu"
    #elseif arch(arm64)
    static let triplet = "aarch64-linux-gnu"
    #endif

    /// glibc's CPU-specific headers (`bits/…`).
    static let includeDirectory = "/usr/include/\(triplet)"

    /// The path the dynamic loader opened a loaded library under, as `dlerror` names it: Debian 12 finds
    /// SQLite as `/lib/…`, later releases as `/usr/lib/…`.
    static func loadedPath(of library: String, containing symbol: String) -> String {
        fx_loaded_path(library, symbol).map { String(cString: $0) } ?? "(\(library) not loaded)"
    }
}
