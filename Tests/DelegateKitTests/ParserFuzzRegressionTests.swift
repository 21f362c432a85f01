import DelegateKit
import Foundation
import Testing

/// Inputs that crashed or hung the parsers (see Fuzz/README.md and Fuzz/regressions/); each must now be
/// refused with a `DelegateError.syntax` saying where, and quickly.
@Suite struct ParserFuzzRegressionTests {
    static let nestedArrays = "struct s { char a" + String(repeating: "[1]", count: 40) + "; };\n"
    static let doublingStructs = "struct s0 { int x; };\n"
        + (1..<40).map { "struct s\($0) { struct s\($0 - 1) a, b; };\n" }.joined()
    static let nestedParentheses = "int " + String(repeating: "(", count: 10_000) + "x"
        + String(repeating: ")", count: 10_000) + "(void)\n"
    static let nestedParameterLists = "int " + String(repeating: "(int ", count: 10_000) + String(repeating: ")", count: 10_000)

    @Test(arguments: [
        // Was infinite recursion (a stack overflow): the member's layout needs the struct's own.
        ("struct a { struct a x; };\n", "a", 1, 12,
         "'struct a' contains itself, which C does not allow; a member can point to it ('struct a *')"),
        ("struct b;\nstruct a { struct b x; };\nstruct b { struct a y; };\n", "a", 2, 12,
         "'struct b' contains itself, which C does not allow; a member can point to it ('struct b *')"),
        // Was an attempt to allocate 99999999999 array elements (out of memory).
        ("struct s { int a[99999999999]; };\n", "s", 1, 17,
         "the types in this text are too large or nest too deeply for DelegateKit to lay out"),
        // Were exponential time (libFuzzer timeouts): every nesting level doubles the layout work.
        (nestedArrays, "s", 1, 93, "the types in this text are too large or nest too deeply for DelegateKit to lay out"),
        // Found by the fuzzer: 19 levels fitted the first limit yet took 12 s and 2 GB under the sanitizers.
        ("struct s { char a" + String(repeating: "[1]", count: 19) + "; };\n", "s", 1, 30,
         "the types in this text are too large or nest too deeply for DelegateKit to lay out"),
        (doublingStructs, "s39", 9, 13, "the types in this text are too large or nest too deeply for DelegateKit to lay out"),
    ])
    func refusedDescriptors(_ text: String, _ name: String, _ line: Int, _ column: Int, _ message: String) throws {
        let error = #expect(throws: DelegateError.self) { _ = try ProtocolDescriptor(parsing: text, name: name) }
        #expect(error == .syntax(message: message, text: text, line: line, column: column))
    }

    @Test func deeplyNestedDeclaratorsAreRefusedNotAStackOverflow() throws {
        // 10,000 parentheses overflowed the stack of the recursive declarator parser.
        for text in [Self.nestedParentheses, Self.nestedParameterLists] {
            let error = #expect(throws: DelegateError.self) { _ = try CSignature(parsing: text) }
            guard case .syntax(let message, _, let line, let column)? = error else { continue }
            #expect(message == "declarations nest more than 100 levels deep here")
            #expect(line == 1 && column > 100)
            #expect(throws: DelegateError.self) { _ = try ProtocolDescriptor(parsing: text, name: "x") }
        }
    }

    @Test func nestingWithinTheLimitsStillParses() throws {
        #expect(try CSignature(parsing: "int " + String(repeating: "(", count: 50) + "*f" + String(repeating: ")", count: 50) + "(void)")
            == CSignature(.int32, []))
        let text = "struct s { char buffer[4096]; int m[4][4]; char a[1][1][1][1][1][1][1][1][1][1]; };"
        let descriptor = try ProtocolDescriptor(parsing: text, name: "s")
        #expect(descriptor.size == 4096 + 64 + 4)
    }

    /// Every saved crash input, read from Fuzz/regressions, is refused by both parsers.
    @Test func savedCrashInputs() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/regressions").standardized
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files.count >= 7)
        for file in files {
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            let text = String(decoding: data, as: UTF8.self)
            #expect(throws: DelegateError.self, "\(file)") { _ = try CSignature(parsing: text) }
            for name in ["a", "s", "s39", "x"] {
                #expect(throws: DelegateError.self, "\(file) as \(name)") { _ = try ProtocolDescriptor(parsing: text, name: name) }
            }
        }
    }
}
