import Foundation
import Glibc

/// Runs this very program again in a child process and collects what it prints.
///
/// `DELEGATEKIT_FAST_PATH` is read once, when the library first makes a closure, so the only way to
/// measure the libffi path next to the register path is a second process. It is started with
/// `posix_spawn` rather than Foundation's `Process` so that nothing but the child's own work (no run
/// loop, no extra threads in this process) happens around it, and it is the same executable as this
/// one: `/proc/self/exe` names the image this process runs even if a rebuild has replaced the file.
enum ChildProcess {
    /// What a child left behind: its exit code (nil if a signal ended it) and its standard output.
    struct Outcome {
        let exitCode: Int32?
        let output: [UInt8]
    }

    /// Runs this executable with `arguments` and this process's environment plus `environment`; its
    /// standard output comes back through a pipe, its standard error goes where ours goes. Nil when it
    /// could not be started.
    static func runSelf(_ arguments: [String], environment: [String: String]) -> Outcome? {
        let name = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "delegatekit-bench"
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        return run("/proc/self/exe", argv: [name] + arguments, environment: merged.map { "\($0.key)=\($0.value)" })
    }

    /// `posix_spawn` of `path` with its standard output on a pipe, read to the end before waiting.
    private static func run(_ path: String, argv: [String], environment: [String]) -> Outcome? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        // Close-on-exec, so no other child (valgrind runs, the Python peers) inherits either end; the
        // dup2 onto the child's standard output clears the flag on that copy. (Glibc's `pipe2` needs
        // _GNU_SOURCE, which Swift's import does not set.)
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, writeEnd, STDOUT_FILENO)

        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, cArguments, cEnvironment)
        // The parent's copy of the write end must go, or the read below would never see the end.
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            return nil
        }

        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count > 0 {
                output += buffer[..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(readEnd)

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return Outcome(exitCode: nil, output: output) }
        }
        // WIFEXITED and WEXITSTATUS are macros Swift does not import: low 7 bits zero means it exited,
        // with its code in the next byte.
        let exitCode: Int32? = status & 0x7f == 0 ? (status >> 8) & 0xff : nil
        return Outcome(exitCode: exitCode, output: output)
    }
}
