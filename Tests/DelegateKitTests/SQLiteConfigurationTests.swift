import Foundation
import Testing

/// SQLite's allocator table and error log set from Swift alone, through the variadic `sqlite3_config`
/// (`SQLiteConfigurationDemo`). SQLite may only be reconfigured while no connection is open in the
/// process, and other suites use SQLite in parallel, so the scene runs in a child process: the demo
/// executable `swift test` builds beside this test bundle.
@Suite struct SQLiteConfigurationTests {
    @Test func allocatorAndLogFromSwiftAlone() throws {
        let directory = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent()
        let demo = directory.appendingPathComponent("delegatekit-demo").path
        try #require(FileManager.default.isExecutableFile(atPath: demo), "no demo executable at \(demo)")
        let child = run(demo, ["sqlite-config"])
        #expect(child.termination == .exit(0), "\(child.output)")
        let lines = child.output.split(separator: "\n").map(String.init)
        // Real SQL ran on the Swift-wrapped allocator, which saw every block allocated and freed.
        #expect(lines.contains("sum through the counting allocator: 6"), "\(child.output)")
        let counts = try #require(lines.first { $0.hasPrefix("allocations: ") }, "\(child.output)")
        let allocations = try #require(Int(counts.dropFirst("allocations: ".count).prefix { $0.isNumber }))
        #expect(allocations > 10)
        #expect(counts.hasSuffix(", live after shutdown: 0"))
        // The default allocator is back, and SQL run on it no longer reaches the wrapper.
        #expect(lines.contains("default allocator restored: yes"), "\(child.output)")
        // The closure received the error SQLite logged.
        #expect(lines.contains("log: (1) near \"SELEC\": syntax error in \"SELEC 1\""), "\(child.output)")
    }
}
