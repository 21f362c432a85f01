// Each misuse DelegateKit stops the program for, one per run, named by the first argument.
// Tests/DelegateKitTests/ReleaseStopTests.swift builds this in release (-O) and checks what each prints:
// a message that only debug builds print helps nobody who meets the stop in production.
import Glibc

guard CommandLine.arguments.count == 2, let scenario = Misuse(rawValue: CommandLine.arguments[1]) else {
    let names = Misuse.allCases.map(\.rawValue).joined(separator: " | ")
    print("usage: delegatekit-misuse \(names)")
    exit(2)
}
try scenario.run()
// Reaching here means a misuse did not stop the program.
if scenario != .configuration { print("no stop") }
