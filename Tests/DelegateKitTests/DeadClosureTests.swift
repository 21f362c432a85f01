import DelegateKit
import DelegateKitFixtures
import Testing

/// A call through a table or pointer whose Swift owner is gone stops the process with a message: in a debug
/// build, which `swift test` makes, one naming the method, the table and where the delegate was made.
@Suite struct DeadClosureTests {
    /// What a debug build says of a delegate's method. The line of the place is the exit test's (its body
    /// is compiled into the macro's expansion), so only the file is checked.
    static let deadMethodMessages = [
        "DelegateKit: method 'transform' of fx_plugin was called after its delegate (created at DelegateKitTests/DeadClosureTests.swift:",
        ") was deinitialized; keep the delegate alive for as long as C may call through its table",
    ]

    @Test func callingThroughADeadDelegatesTableStopsNamingTheMethod() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var table: UnsafeMutablePointer<fx_plugin>?
            do {
                let delegate = DynamicDelegate(protocol: pluginProtocol)
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value }
                table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
            } catch {
                return
            }
            var called = false
            _ = fx_plugin_transform(table, nil, 1, &called)
        }
        expectDeadCall(result, saying: Self.deadMethodMessages)
    }

    @Test func aFunctionPointerCCopiedStopsNamingTheMethodToo() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var copied: (@convention(c) (UnsafeMutableRawPointer?, Int64) -> Int64)?
            do {
                let delegate = TypedDelegate(for: fx_plugin.self)
                try delegate.implement(\.transform) { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value }
                copied = delegate.typedTable.pointee.transform
            } catch {
                return
            }
            _ = copied?(nil, 1)
        }
        expectDeadCall(result, saying: Self.deadMethodMessages)
    }

    @Test func aDeadCClosureStopsNamingItsSignature() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var pointer: (@convention(c) (Int32) -> Int32)?
            do {
                let closure = try CClosure { (x: Int32) -> Int32 in x }
                pointer = try closure.functionPointer()
            } catch {
                return
            }
            _ = pointer?(1)
        }
        expectDeadCall(result, saying: ["DelegateKit: a CClosure `int32_t (int32_t)` was called after it was deinitialized"])
    }

    /// The message is made once per signature and kept with it: closures of two signatures freed one
    /// after another each name their own, however many of each died before.
    @Test func eachDeadCClosureNamesItsOwnSignature() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var pointer: (@convention(c) (Double) -> Double)?
            do {
                for _ in 0..<3 { _ = try CClosure { (x: Int32) -> Int32 in x } }
                let closure = try CClosure { (x: Double) -> Double in x }
                pointer = try closure.functionPointer()
                for _ in 0..<3 { _ = try CClosure { (x: Int32) -> Int32 in x } }
            } catch {
                return
            }
            _ = pointer?(1)
        }
        expectDeadCall(result, saying: ["DelegateKit: a CClosure `double (double)` was called after it was deinitialized"], never: "int32_t")
    }
}

/// Checks what a call of a dead closure printed as it stopped the child (`result`, its standard error
/// observed): in a debug build each of `messages` and not `absent`; in an optimized build, where no closure
/// keeps an epitaph, the one message every such call prints.
func expectDeadCall(
    _ result: ExitTest.Result?, saying messages: [String], never absent: String? = nil,
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) {
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #if DEBUG
    for message in messages { #expect(stderr.contains(message), "\(stderr)", sourceLocation: sourceLocation) }
    if let absent { #expect(!stderr.contains(absent), "\(stderr)", sourceLocation: sourceLocation) }
    #else
    let release = "DelegateKit: C called a closure after it was freed; keep the closure (or its delegate) alive"
    #expect(stderr.contains(release), "\(stderr)", sourceLocation: sourceLocation)
    #endif
}
