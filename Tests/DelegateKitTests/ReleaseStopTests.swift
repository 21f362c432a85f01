import Foundation
import Glibc
import Testing

/// Every misuse DelegateKit stops the program for prints its whole message in a release build too:
/// `precondition` prints nothing under `-O`, and a user meets these stops in production. Each case runs
/// `delegatekit-misuse` (Tests/Programs/delegatekit-misuse), built with `-c release` (see ``ReleaseBuild``), in a
/// child process.
@Suite struct ReleaseStopTests {
    @Test func theExecutableIsAReleaseBuild() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-misuse"), ["configuration"])
        #expect(child.termination == .exit(0))
        #expect(child.output == "release\n")
    }

    /// The signal Swift's trap raises: `ud2` is an illegal instruction on x86_64, `brk` a breakpoint on
    /// aarch64.
    #if arch(x86_64)
    static let trapSignal = SIGILL
    #else
    static let trapSignal = SIGTRAP
    #endif

    @Test(arguments: [
        ("argument-of-another-type",
         "argument 1 of `int64_t (void *, int64_t)` has C type `int64_t`, not `double` (Double)"),
        ("argument-out-of-range",
         "argument index 2 is out of range for C signature `int64_t (void *, int64_t)`"),
        // The first call's type passed and was noted; the second's must still be checked.
        ("struct-argument-of-another-type-after-its-own",
         "argument 0 of `struct { int32_t; float; } (struct { int32_t; float; }, struct { int32_t; float; })` "
            + "has C type `struct { int32_t; float; }`, not `struct { float; float; }` (TwoFloats)"),
        ("return-value-of-another-type",
         "`int64_t (void *, int64_t)` returns `int64_t`, not `int32_t` (Int32)"),
        ("return-bytes-of-another-size",
         "`int64_t (void *, int64_t)` returns 8 bytes, not 4 (CInvocation.setReturnBytes)"),
        ("jump-with-no-call-armed",
         "JumpTarget.jump(_:) was called with no call catching jumps to it running on this thread: "
            + "jump only from inside CFunction.call(catchingJumpsTo:…), on its thread"),
    ])
    func misuseStopsWithItsWholeMessage(scenario: String, message: String) throws {
        let child = run(try ReleaseBuild.executable("delegatekit-misuse"), [scenario])
        #expect(child.termination == .signal(Self.trapSignal), "\(scenario) did not stop: \(child.output)")
        #expect(child.output.contains("Fatal error: DelegateKit: \(message)\n"), "\(scenario) printed: \(child.output)")
    }
}
