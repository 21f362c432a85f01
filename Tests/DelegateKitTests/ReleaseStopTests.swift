import Foundation
import Glibc
import Testing

/// Every misuse DelegateKit stops the program for prints its whole message in a release build too:
/// `precondition` prints nothing under `-O`, and a user meets these stops in production. Each case runs
/// `delegatekit-misuse` (Sources/delegatekit-misuse), built here with `-c release`, in a child process.
@Suite struct ReleaseStopTests {
    /// The release executable, built once for all cases; in a scratch path of its own, so that it never
    /// waits for the build directory of the `swift test` that runs this.
    static let executable: Result<URL, BuildFailure> = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let scratch = root.appendingPathComponent(".build/release-stops")
        let build = run("/usr/bin/env", ["swift", "build", "-c", "release", "--product", "delegatekit-misuse",
                                         "--package-path", root.path, "--scratch-path", scratch.path])
        guard build.termination == .exit(0) else { return .failure(BuildFailure(output: build.output)) }
        return .success(scratch.appendingPathComponent("release/delegatekit-misuse"))
    }()

    struct BuildFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "swift build -c release failed:\n\(output)" }
    }

    @Test func theExecutableIsAReleaseBuild() throws {
        let child = run(try Self.executable.get().path, ["configuration"])
        #expect(child.termination == .exit(0))
        #expect(child.output == "release\n")
    }

    @Test(arguments: [
        ("slot-naming-no-method",
         "MisnamedPlugin.onTransform (@Slot(\"transfrom\")): fx_plugin has no method named 'transfrom'; did you mean 'transform'?"),
        ("slot-of-another-signature",
         "MisdeclaredPlugin.onTransform (@Slot(\"transform\")): method 'transform' of fx_plugin has C signature "
            + "`int64_t (void *, int64_t)`, but the closure has C signature `int64_t (void *, int32_t)`"),
        ("slot-into-another-struct",
         "CrossedPlugin.onClose (@Slot(\\sqlite3_io_methods.xClose)): member 'xClose' of fx_plugin cannot be used: "
            + "the slot's key path is into sqlite3_io_methods, not fx_plugin"),
        ("slot-of-another-swift-type",
         "MistypedPlugin.onTransform (@Slot(\\fx_plugin.transform)): member 'transform' of fx_plugin has type "
            + "`@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.Int64`, but the "
            + "closure has type `@convention(c) (Swift.Optional<Swift.OpaquePointer>, Swift.Int64) -> Swift.Int64`"),
        ("function-pointer-of-another-type",
         "CClosure.functionPointer(as:): `@convention(c) (Swift.Double) -> Swift.Int32` does not fit the closure's "
            + "C signature `int32_t (int32_t)`: its parameter 1 is `Swift.Double` (C type `double`), but the closure's is `int32_t`"),
        ("argument-of-another-type",
         "argument 1 of `int64_t (void *, int64_t)` has C type `int64_t`, not `double` (Double)"),
        ("argument-out-of-range",
         "argument index 2 is out of range for C signature `int64_t (void *, int64_t)`"),
        ("return-value-of-another-type",
         "`int64_t (void *, int64_t)` returns `int64_t`, not `int32_t` (Int32)"),
    ])
    func misuseStopsWithItsWholeMessage(scenario: String, message: String) throws {
        let child = run(try Self.executable.get().path, [scenario])
        #expect(child.termination == .signal(SIGILL), "\(scenario) did not stop: \(child.output)")
        #expect(child.output.contains("Fatal error: DelegateKit: \(message)\n"), "\(scenario) printed: \(child.output)")
    }
}

/// How a child process ended.
enum Termination: Equatable {
    case exit(Int32)
    case signal(Int32)
}

/// Runs `path` (looked up in `PATH` when it has no slash) with `arguments` to the end, standard output and
/// error together. posix_spawn rather than Foundation's `Process`, whose `run()` leaks a weak-reference
/// side table that LeakSanitizer reports in the AddressSanitizer run.
func run(_ path: String, _ arguments: [String]) -> (termination: Termination, output: String) {
    var pipe: [Int32] = [0, 0]
    guard Glibc.pipe(&pipe) == 0 else { return (.exit(-1), "pipe failed: errno \(errno)") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
    posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
    posix_spawn_file_actions_addclose(&actions, pipe[0])
    // The message is what counts, not a backtrace.
    let environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
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
