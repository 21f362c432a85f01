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
        ("argument-of-another-type",
         "argument 1 of `int64_t (void *, int64_t)` has C type `int64_t`, not `double` (Double)"),
        ("argument-out-of-range",
         "argument index 2 is out of range for C signature `int64_t (void *, int64_t)`"),
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
