@testable import DelegateKit  // Locked: a lock ThreadSanitizer can see
import DelegateKitExamples
import DelegateKitFixtures
import Foundation
import Glibc
import Synchronization
import Testing

// What more than one test file uses. A helper only one file uses stays in that file; the fixture
// library's structs state their C layout in FixtureStructs.swift.

// MARK: Tables

/// The fixture "library" `fx_plugin_run` tests each optional slot for NULL before calling it, so what
/// it calls shows, from C, which slots the delegate filled.
let pluginProtocol = ProtocolDescriptor(name: "fx_plugin", members: [
    .field("version", .int32),
    .method(MethodDescriptor(name: "start", signature: CSignature(.int32, [.pointer]), isRequired: true)),
    .method(MethodDescriptor(name: "transform", signature: CSignature(.int64, [.pointer, .int64]))),
    .method(MethodDescriptor(name: "log", signature: CSignature(.void, [.pointer, .pointer]))),
    .method(MethodDescriptor(name: "weigh", signature: CSignature(.double, [.pointer, fx_point.cType]))),
])

/// glibc's `cookie_io_functions_t`, as a program would describe it.
let cookieIO = ProtocolDescriptor(name: "cookie_io_functions_t", methods: [
    MethodDescriptor(name: "read", signature: try! CSignature(parsing: "ssize_t (void *, char *, size_t)")),
    MethodDescriptor(name: "write", signature: try! CSignature(parsing: "ssize_t (void *, const char *, size_t)")),
    MethodDescriptor(name: "seek", signature: try! CSignature(parsing: "int (void *, int64_t *, int)")),
    MethodDescriptor(name: "close", signature: try! CSignature(parsing: "int (void *)"), isRequired: true),
])

/// A `BlockDelegate` for `cookie_io_functions_t` (``cookieIO``), as a library author would publish it.
final class CookieStream: BlockDelegate {
    @Slot("read") var onRead: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int)?
    @Slot("write") var onWrite: ((UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Int)?
    @Slot("seek") var onSeek: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<Int64>?, Int32) -> Int32)?
    @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int32)?
    init() throws { try super.init(protocol: cookieIO) }
}

/// A wrapper class whose slots are named by key paths into the imported `fx_plugin` struct.
final class TypedPlugin: BlockDelegate {
    @Slot(\fx_plugin.start) var onStart: ((UnsafeMutableRawPointer?) -> Int32)?
    @Slot(\fx_plugin.transform) var onTransform: ((UnsafeMutableRawPointer?, Int64) -> Int64)?
    init() throws { try super.init(for: fx_plugin.self) }
}

/// A `@Slot` of another C signature than `close`'s, declared with the throwing initializer: the mismatch
/// is thrown, not a stop.
final class ReportingMisdeclaredStream: BlockDelegate {
    @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int64)?
    init() throws { try super.init(protocol: cookieIO) }
}

/// A Swift struct posing as a C table, with a Swift closure member C could neither call nor copy.
struct ClosureTable {
    var apply: (@convention(c) (Int32) -> Int32)?
    var run: ((Int32) -> Int32)?
}

/// Why `fx_geometry.area` cannot be implemented: the tests never make `fx_extent` a ``CValue``.
let extentRefusal = "its type `@convention(c) (__C.fx_extent) -> Swift.Int64` takes the struct fx_extent by value, "
    + "and fx_extent does not conform to CValue; state its C layout "
    + "(`extension fx_extent: CValue { static var cType: CType { .structure([…]) } }`) to implement it"

// MARK: State that closures C calls share

/// A thread-safe counter that `@Sendable` closures can capture.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    func increment(by amount: Int = 1) { storage.add(amount, ordering: .relaxed) }
    var value: Int { storage.load(ordering: .relaxed) }
}

/// Collects strings from closures C may call on any thread.
final class LogBox: Sendable {
    private let storage = Locked<[String]>([])
    func append(_ message: String) { storage.withLock { $0.append(message) } }
    var messages: [String] { storage.withLock { $0 } }
}

/// The bytes behind a cookie `FILE *`, safe to use from whatever thread stdio calls on.
final class MemoryFile: Sendable {
    private let state = Locked<(bytes: [UInt8], position: Int)>(([], 0))
    let closes = Counter()
    let reads = Counter()
    let writes = Counter()

    var contents: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    func read(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int {
        reads.increment()
        return state.withLock { state in
            let count = max(0, min(size, state.bytes.count - state.position))
            state.bytes.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(buffer!).copyMemory(from: bytes.baseAddress! + state.position, byteCount: count)
            }
            state.position += count
            return count
        }
    }

    func write(_ buffer: UnsafePointer<CChar>?, _ size: Int) -> Int {
        writes.increment()
        return state.withLock { state in
            let incoming = UnsafeRawBufferPointer(start: buffer, count: size)
            let end = state.position + size
            if end > state.bytes.count { state.bytes += Array(repeating: 0, count: end - state.bytes.count) }
            state.bytes.replaceSubrange(state.position..<end, with: incoming)
            state.position = end
            return size
        }
    }

    func seek(_ offset: UnsafeMutablePointer<Int64>?, _ whence: Int32) -> Int32 {
        state.withLock { state in
            let base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? state.position : state.bytes.count
            let target = base + Int(offset!.pointee)
            guard target >= 0 else { return -1 }
            state.position = target
            offset!.pointee = Int64(target)
            return 0
        }
    }

    func close() -> Int32 {
        closes.increment()
        return 0
    }
}

// MARK: Calling C

/// The `Next` of a layer of ``pluginProtocol``'s `transform`.
typealias TransformNext = Next<UnsafeMutableRawPointer?, Int64, Int64>

/// Calls the plugin's `transform` slot from C; nil when C finds the slot NULL.
func transform(_ delegate: DynamicDelegate, _ value: Int64) -> Int64? {
    var called = false
    let result = fx_plugin_transform(delegate.table.assumingMemoryBound(to: fx_plugin.self), nil, value, &called)
    return called ? result : nil
}

/// The address of a fixture function: the test executable's own symbols are not exported, so `dlsym`
/// cannot find them; the fixture lists them (as some C libraries hand out tables of their functions).
func fixture(_ name: String) throws -> UnsafeRawPointer {
    try #require(fx_function(name), "the fixture has no function \(name)")
}

/// Every scalar leaf of `type` with its byte offset, nested structures flattened: what the fixture's
/// field tables list, computed from DelegateKit's layout rules instead of the C compiler's.
func leaves(of type: CType, at base: Int = 0) -> [(offset: Int, type: CType)] {
    guard case .structure(let members) = type else { return [(base, type)] }
    return zip(members, type.memberOffsets).flatMap { leaves(of: $0, at: base + $1) }
}

/// One SQL statement's rows, every column as text (`sqliteQuery` under a shorter name).
func query(_ db: OpaquePointer?, _ sql: String) throws -> [[String]] { try sqliteQuery(db, sql) }

// MARK: Child processes

/// How a child process ended.
enum Termination: Equatable {
    case exit(Int32)
    case signal(Int32)
}

/// Runs `path` (looked up in `PATH` when it has no slash) with `arguments` to the end, standard output and
/// error together; `extra` is added to this process's environment. posix_spawn rather than Foundation's
/// `Process`, whose `run()` leaks a weak-reference side table that LeakSanitizer reports in the
/// AddressSanitizer run.
func run(_ path: String, _ arguments: [String], environment extra: [String: String] = [:]) -> (termination: Termination, output: String) {
    // Close-on-exec, so that no other child spawned meanwhile (the tests run in parallel) keeps a copy of
    // the write end and holds off the end of file this read waits for; dup2 gives the child its own.
    var pipe: [Int32] = [0, 0]
    guard fx_pipe_cloexec(&pipe) == 0 else { return (.exit(-1), "pipe failed: errno \(errno)") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
    posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
    posix_spawn_file_actions_addclose(&actions, pipe[0])
    // The message is what counts, not a backtrace.
    let environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"].merging(extra) { $1 }) { $1 }
        .map { "\($0.key)=\($0.value)" }
    var child: pid_t = 0
    let status = withCStrings([path] + arguments) { argv in
        withCStrings(environment) { envp in posix_spawnp(&child, path, &actions, nil, argv, envp) }
    }
    close(pipe[1])
    defer { close(pipe[0]) }
    guard status == 0 else { return (.exit(-1), "could not run \(path): error \(status)") }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(pipe[0], &buffer, buffer.count)
        if count > 0 { output += buffer[..<count] } else if count == 0 || errno != EINTR { break }
    }
    var waitStatus: Int32 = 0
    while waitpid(child, &waitStatus, 0) == -1 && errno == EINTR {}
    // WIFEXITED/WTERMSIG are macros Swift does not import: the low 7 bits are the signal, 0 for an exit.
    let termination: Termination = waitStatus & 0x7f == 0 ? .exit((waitStatus >> 8) & 0xff) : .signal(waitStatus & 0x7f)
    return (termination, String(decoding: output, as: UTF8.self))
}

/// `strings` as a NULL-terminated C array, valid during `body`.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { pointers.forEach { free($0) } }
    return body(pointers)
}

/// Counts the objects made with it that are still alive: what a closure whose frames a jump skipped held
/// is never released, so a count that does not come back down shows the leak.
final class Census: Sendable {
    private let count = Atomic<Int>(0)

    /// How many members are alive.
    var alive: Int { count.load(ordering: .relaxed) }

    /// A new member holding `value`, counted until it is deinitialized.
    func member(_ value: Int64) -> Member { Member(value, in: self) }

    final class Member: Sendable {
        let value: Int64
        private let census: Census

        fileprivate init(_ value: Int64, in census: Census) {
            self.value = value
            self.census = census
            census.count.add(1, ordering: .relaxed)
        }

        deinit { census.count.subtract(1, ordering: .relaxed) }
    }
}
