import DelegateKit
import Foundation
import Glibc
import Testing

/// Calls racing the changes of their slot: every state a call can find its slot in while a change is in
/// progress (the list in `SlotChange.swift`), and C threads calling while a slot is implemented, replaced
/// and removed, fresh ones (each thread's first call takes the entries' rare path) and long-lived ones.
/// `delegatekit-slot-races` runs them in child processes, each with an alarm, in two builds: a release
/// build, what users ship, where an optimizing C compiler may reshape the entries (the race of issue 57
/// existed there only), and the suite's own (debug, or a sanitizer's), on both call paths.
@Suite struct SlotChangeTests {
    /// The calls the stress makes, divided by `DELEGATEKIT_CHURN_SCALE`: in a release build, enough fresh
    /// threads' calls that a race of one call in 100,000 fails most runs of the suite (the libffi path's of
    /// issue 57 was about that, on two cores); the suite's own build is slower, and checks other things.
    static func stressArguments(release: Bool, share: Int = 1) -> [String] {
        let scale = share * (Int(ProcessInfo.processInfo.environment["DELEGATEKIT_CHURN_SCALE"] ?? "") ?? 1)
        let (calls, rounds) = release ? (100_000, 10_000) : (40_000, 4_000)
        return [String(calls / max(scale, 1)), String(rounds / max(scale, 1))]
    }

    /// What `states` prints on a path whose stubs and dispatchers are `kind`'s code.
    static func expectedStates(_ kind: String) -> String {
        var lines = [
            "NULL slot: C finds NULL",
            "stub (\(kind)): 11",
            "retired stub, slot holding another: 12 (the slot's own: 12)",
            "retired stubs, slot NULL: 0 0",
            "stub reused: 13 13 (one of them is the slot's)",
            "dispatcher (\(kind)): 13, empty 0, then 14",
            "retired stubs, slot holding the dispatcher: 14 14 14",
            "dispatcher with a layer: 28, layer removed: 14",
            "forwarded (\(kind)): 14, target emptied: 0, slot NULL",
            "2000 closures made and freed: none took a slot of the live delegates' (4 addresses)",
        ]
        for slot in ["plain slot", "stable slot"] {
            for call in ["a fresh thread's first call", "a long-lived thread's call", "a nested call on a fresh thread",
                         "a nested call on a long-lived thread"] {
                lines.append("\(call), \(slot): answered 12, captures released 0 while it ran, 1 once it left")
            }
        }
        return (lines + ["done"]).joined(separator: "\n") + "\n"
    }

    /// Runs the program with `arguments` on both paths in each build; `check` gets each run's output.
    static func runEverywhere(_ arguments: [String], release: [String]? = nil,
                              check: (_ label: String, _ kind: String, _ output: String) -> Void) throws {
        for build in try ReleaseBuild.builds(of: "delegatekit-slot-races") {
            for fastPath in ["1", "0"] {
                let kind = fastPath == "1" && ExpectedRegisterPath.onThisCPU ? "registers" : "libffi"
                let child = run(build.path, build.name == "release" ? (release ?? arguments) : arguments,
                                environment: ["DELEGATEKIT_FAST_PATH": fastPath])
                let label = "\(build.name), DELEGATEKIT_FAST_PATH=\(fastPath)"
                // What a sanitized child reports goes to its standard error, which `run` returns with its output.
                #expect(child.termination == .exit(0), "\(label): \(child.termination)\n\(child.output)")
                #expect(!child.output.contains("Sanitizer"), "\(label):\n\(child.output)")
                check(label, kind, child.output)
            }
        }
    }

    @Test func everyStateACallCanFindItsSlotIn() throws {
        try Self.runEverywhere(["states"]) { label, kind, output in
            #expect(output == Self.expectedStates(kind), "\(label)")
        }
    }

    @Test func freshAndLongLivedThreadsCallWhileTheSlotChanges() throws {
        try Self.checkStress("stress", share: 1)
    }

    /// The same where C calls the slot with eight value arguments, some on its stack: the stubs and the
    /// dispatcher enter through the array entry where the register path runs (`ArrayEntryTests` checks the
    /// entry such a slot takes), through libffi's with `DELEGATEKIT_FAST_PATH=0`. Half the calls.
    @Test func wideCallsWhileTheSlotChanges() throws {
        try Self.checkStress("stress-wide", share: 2)
    }

    /// The same with eight parameters, the most a fixed-arity closure takes: in an optimized build such a
    /// closure is handed the array entry's arguments one by one (`cffi_spread_handler`); in a debug build,
    /// and past eight, in pack form. Half the calls.
    @Test func eightParameterCallsWhileTheSlotChanges() throws {
        try Self.checkStress("stress-eight", share: 2)
    }

    /// The same where C passes and receives a struct of four `int64_t`: in memory on x86_64, where the
    /// stubs and the dispatcher enter through the array entry's struct form (`cffi_enter_array_composite`,
    /// the result at the address C passed); libffi's entry elsewhere. Half the calls.
    @Test func structCallsWhileTheSlotChanges() throws {
        try Self.checkStress("stress-struct", share: 2)
    }

    /// Runs a stress `mode` everywhere and checks that each of its four runs saw no wrong answer.
    static func checkStress(_ mode: String, share: Int) throws {
        try runEverywhere([mode] + stressArguments(release: false, share: share),
                          release: [mode] + stressArguments(release: true, share: share)) { label, _, output in
            let lines = output.split(separator: "\n")
            // One line per kind of thread and slot, each saying how many calls it checked.
            let counted = lines.filter { $0.contains(" calls checked ") }
            #expect(counted.count == 4, "\(label): \(output)")
            #expect(counted.allSatisfy { $0.contains(", 0 wrong,") }, "\(label): \(output)")
            #expect(lines.last == "done", "\(label): \(output)")
            print("\(label):\n" + counted.joined(separator: "\n"))
        }
    }
}
