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
        guard let child = Spawned(arguments, environment: environment, talking: false) else { return nil }
        var output: [UInt8] = []
        while let chunk = child.readChunk() { output += chunk }
        return Outcome(exitCode: child.wait(), output: output)
    }

    /// This executable started with `arguments` (and `environment` added), its standard input and output
    /// on pipes, for a conversation in lines: the parent asks, the child answers, and only one of them
    /// works at a time. Nil when it could not be started.
    static func startSelf(_ arguments: [String], environment: [String: String]) -> Conversation? {
        // A child that died leaves a pipe whose write would end this process by SIGPIPE; ignored, the
        // write fails instead and the next read finds the end of its output.
        signal(SIGPIPE, SIG_IGN)
        return Spawned(arguments, environment: environment, talking: true).map(Conversation.init)
    }

    /// A child that answers each line written to it with one line.
    final class Conversation {
        private let child: Spawned
        private var pending: [UInt8] = []

        fileprivate init(_ child: Spawned) { self.child = child }

        /// The child's next line, without its newline; nil at the end of its output.
        func readLine() -> String? {
            while true {
                if let newline = pending.firstIndex(of: 10) {
                    defer { pending.removeSubrange(...newline) }
                    return String(decoding: pending[..<newline], as: UTF8.self)
                }
                guard let chunk = child.readChunk() else { return nil }
                pending += chunk
            }
        }

        /// Writes `line` and a newline to the child; false if it is gone.
        @discardableResult
        func send(_ line: String) -> Bool {
            var bytes = Array((line + "\n").utf8)[...]
            while !bytes.isEmpty {
                let count = bytes.withUnsafeBytes { write(child.input, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                bytes = bytes.dropFirst(count)
            }
            return true
        }

        /// Closes the child's input, its cue to end, and waits for it: its exit code, nil after a signal.
        func finish() -> Int32? {
            child.closeInput()
            while child.readChunk() != nil {}
            return child.wait()
        }
    }

    /// A spawned copy of this executable: its pid, the read end of its standard output and, when it
    /// talks, the write end of its standard input.
    fileprivate final class Spawned {
        let pid: pid_t
        let output: Int32
        private(set) var input: Int32 = -1

        init?(_ arguments: [String], environment: [String: String], talking: Bool) {
            let name = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "delegatekit-bench"
            var merged = ProcessInfo.processInfo.environment
            merged.merge(environment) { _, new in new }
            var fromChild: [Int32] = [-1, -1], toChild: [Int32] = [-1, -1]
            guard pipe(&fromChild) == 0 else { return nil }
            if talking, pipe(&toChild) != 0 {
                fromChild.forEach { close($0) }
                return nil
            }
            // Close-on-exec, so no other child (valgrind runs, the Python peers) inherits any end; the
            // dup2 onto the child's standard input and output clears the flag on those copies. (Glibc's
            // `pipe2` needs _GNU_SOURCE, which Swift's import does not set.)
            for end in fromChild + toChild where end >= 0 { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }

            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO)
            if talking { posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO) }

            let cArguments = ([name] + arguments).map { strdup($0) } + [nil]
            let cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer {
                cArguments.forEach { free($0) }
                cEnvironment.forEach { free($0) }
            }
            var pid: pid_t = 0
            let spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nil, cArguments, cEnvironment)
            // The parent's copies of the child's ends must go, or a read here would never see the end
            // (and the child would never see its input end).
            close(fromChild[1])
            if talking { close(toChild[0]) }
            guard spawned == 0 else {
                close(fromChild[0])
                if talking { close(toChild[1]) }
                return nil
            }
            self.pid = pid
            output = fromChild[0]
            if talking { input = toChild[1] }
        }

        /// The next bytes the child wrote; nil at the end of its output.
        func readChunk() -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count > 0 { return Array(buffer[..<count]) }
                if count < 0 && errno == EINTR { continue }
                return nil
            }
        }

        func closeInput() {
            if input >= 0 { close(input) }
            input = -1
        }

        /// Waits for the child: its exit code, nil if a signal ended it.
        func wait() -> Int32? {
            closeInput()
            close(output)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { return nil }
            }
            // WIFEXITED and WEXITSTATUS are macros Swift does not import: low 7 bits zero means it exited,
            // with its code in the next byte.
            return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
        }
    }
}
