import DelegateKit
import DelegateKitDocumentationExamples
import DelegateKitFixtures
import Foundation
import Testing

/// The docs' code is compiled code: every ```swift block of the README and of the DocC catalog must be,
/// line for line, a region of `Examples/DocumentationExamples` (or of the example consumer package
/// `Examples/Consumer`, which Scripts/check-consumer-manifest.sh builds as a user's package, or of the macro
/// package's tests, which CI runs) between `// doc:begin NAME` and `// doc:end`, and every region must
/// be quoted somewhere. Regions may nest; indentation common to a region's lines and trailing spaces are
/// ignored.
@Suite struct DocumentationExamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A ```swift block of a Markdown file.
    struct Block {
        let file: String
        let line: Int
        let text: String
    }

    /// A marked region of a Swift file.
    struct Region {
        let file: String
        let name: String
        let line: Int
        var lines: [String]
    }

    /// Strips trailing spaces, leading and trailing blank lines, and the indentation all lines share.
    static func normalize(_ lines: [String]) -> String {
        var lines = lines.map { String($0.reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed()) }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        let indent = lines.filter { !$0.isEmpty }.map { $0.prefix(while: { $0 == " " }).count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
    }

    /// The ```swift blocks of a Markdown text.
    static func blocks(in text: String, file: String) -> [Block] {
        var result: [Block] = []
        var current: (line: Int, lines: [String])?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var open = current {
                if trimmed == "```" {
                    result.append(Block(file: file, line: open.line, text: normalize(open.lines)))
                    current = nil
                } else {
                    open.lines.append(line)
                    current = open
                }
            } else if trimmed == "```swift" {
                current = (index + 1, [])
            }
        }
        return result
    }

    /// The marked regions of a Swift text; the marker lines belong to no region.
    static func regions(in text: String, file: String) throws -> [Region] {
        var finished: [Region] = []
        var open: [Region] = []
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// doc:begin ") {
                open.append(Region(file: file, name: String(trimmed.dropFirst("// doc:begin ".count)), line: index + 1, lines: []))
            } else if trimmed == "// doc:end" {
                guard let region = open.popLast() else {
                    throw DocCheckError("\(file):\(index + 1): `// doc:end` without a `// doc:begin`")
                }
                finished.append(region)
            } else {
                for position in open.indices { open[position].lines.append(line) }
            }
        }
        if let unclosed = open.last { throw DocCheckError("\(file):\(unclosed.line): region \(unclosed.name) is never closed") }
        return finished
    }

    struct DocCheckError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    static func files(in relativeDirectory: String, ending suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(relativeDirectory).path)
            .filter { $0.hasSuffix(suffix) }.sorted().map { "\(relativeDirectory)/\($0)" }
    }

    static func allBlocks() throws -> [Block] {
        try (["README.md"] + files(in: "Sources/DelegateKit/DelegateKit.docc", ending: ".md")).flatMap {
            blocks(in: try read($0), file: $0)
        }
    }

    static func allRegions() throws -> [Region] {
        try (files(in: "Examples/DocumentationExamples", ending: ".swift")
            + files(in: "Examples/Consumer/Sources/MyWrapper", ending: ".swift") + ["Examples/Consumer/Package.swift"]
            + files(in: "Examples/MacroConsumer/Sources/MyFastWrapper", ending: ".swift")
            + ["Examples/MacroConsumer/Package.swift"]
            + files(in: "Tests/DelegateKitMacrosTests", ending: ".swift")).flatMap {
            try regions(in: try read($0), file: $0)
        }
    }

    /// What the check says about a set of blocks and regions: one line per block not backed by a region
    /// and per region no block quotes.
    static func problems(blocks: [Block], regions: [Region]) -> [String] {
        let texts = regions.map { normalize($0.lines) }
        var quoted = Set<Int>()
        var problems: [String] = []
        for block in blocks {
            if let index = texts.firstIndex(of: block.text) {
                quoted.formUnion(texts.indices.filter { texts[$0] == texts[index] })
                continue
            }
            // Name the region sharing the most lines, and its first differing line, to make a drift easy to fix.
            let blockLines = block.text.components(separatedBy: "\n")
            let closest = texts.indices.max { a, b in
                Set(texts[a].components(separatedBy: "\n")).intersection(blockLines).count
                    < Set(texts[b].components(separatedBy: "\n")).intersection(blockLines).count
            }
            var hint = ""
            if let closest {
                let regionLines = texts[closest].components(separatedBy: "\n")
                let differing = (0..<min(blockLines.count, regionLines.count)).first { blockLines[$0] != regionLines[$0] }
                    ?? min(blockLines.count, regionLines.count)
                let docLine = differing < blockLines.count ? blockLines[differing] : "(end of block)"
                let codeLine = differing < regionLines.count ? regionLines[differing] : "(end of region)"
                hint = "; closest is region \(regions[closest].name) (\(regions[closest].file):\(regions[closest].line)), "
                    + "line \(differing + 1) differs:\n    doc:  \(docLine)\n    code: \(codeLine)"
            }
            problems.append("\(block.file):\(block.line): ```swift block is not compiled code\(hint)")
        }
        for index in regions.indices where !quoted.contains(index) {
            problems.append("\(regions[index].file):\(regions[index].line): region \(regions[index].name) is quoted by no doc block")
        }
        return problems
    }

    /// The README says which libffi DelegateKit is tested with: the one these tests run with is among them
    /// (CI installs Debian's), so the claim is what CI proves.
    @Test func theReadmeNamesTheLibffiTheTestsRunWith() throws {
        let query = run("/usr/bin/env", ["pkg-config", "--modversion", "libffi"])
        #expect(query.termination == .exit(0), "pkg-config: \(query.output)")
        let version = query.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let claim = try Self.read("README.md").split(separator: "\n").first { $0.hasPrefix("- Tested with libffi") }
        #expect(!version.isEmpty && claim?.contains(version) == true, "the README's \(claim ?? "(no claim)") does not name libffi \(version)")
    }

    /// The Call Paths article's cost table repeats rows of the benchmark's own (Benchmarks/README.md,
    /// "Calls", the `int64(int64,int64)` column), so each of its figures is one the benchmark printed.
    @Test func theCallPathsArticleQuotesTheBenchmarksFigures() throws {
        /// A Markdown table row's cells, without the bold marks.
        func cells(_ line: Substring) -> [String] {
            line.split(separator: "|").map { $0.replacingOccurrences(of: "**", with: "").trimmingCharacters(in: .whitespaces) }
        }
        let article = try Self.read("Sources/DelegateKit/DelegateKit.docc/CallPaths.md").split(separator: "\n")
        let benchmark = try Self.read("Benchmarks/README.md").split(separator: "\n")
        guard let header = article.firstIndex(where: { $0.hasPrefix("| per call | ns | instructions |") }) else {
            Issue.record("CallPaths.md has no cost table")
            return
        }
        let rows = article[(header + 2)...].prefix { $0.hasPrefix("|") }.map(cells)
        #expect(rows.count >= 4)
        for row in rows {
            guard row.count >= 3, let quoted = benchmark.map(cells).first(where: { $0.first == row[0] }), quoted.count >= 2 else {
                Issue.record("CallPaths.md's row \(row) is not one of Benchmarks/README.md's")
                continue
            }
            #expect(quoted[1] == "\(row[1]) (\(row[2]))", "CallPaths.md's \(row[0]): \(row[1]) ns, \(row[2]) instructions; Benchmarks/README.md: \(quoted[1])")
        }
    }

    @Test func everySwiftBlockOfTheDocsIsCompiledCode() throws {
        let blocks = try Self.allBlocks()
        let regions = try Self.allRegions()
        #expect(blocks.count >= 20, "the README and the catalog lost their examples? found \(blocks.count)")
        let problems = Self.problems(blocks: blocks, regions: regions)
        #expect(problems.isEmpty, Comment(rawValue: problems.joined(separator: "\n")))
    }

    /// The check itself: a block that drifts by one character, or a region nobody quotes, is reported.
    @Test func theCheckSeesDrift() throws {
        let region = try Self.regions(in: """
            func f() {
                // doc:begin a
                let x = 1
                // doc:end
            }
            """, file: "f.swift")
        #expect(region.count == 1 && region[0].name == "a")
        let same = Self.blocks(in: "```swift\nlet x = 1   \n```\n", file: "same.md")
        #expect(Self.problems(blocks: same, regions: region).isEmpty)
        let drifted = Self.blocks(in: "```swift\nlet x = 2\n```\n", file: "drifted.md")
        #expect(Self.problems(blocks: drifted, regions: region).count == 2)  // the block, and the unquoted region
        #expect(throws: DocCheckError.self) { try Self.regions(in: "// doc:begin open\nlet y = 1\n", file: "g.swift") }
    }

    /// The manifest fragment Getting Started shows names the product by the identity SwiftPM gives the
    /// package from its URL (the URL's last path component without `.git`), and that product exists.
    @Test func theManifestFragmentNamesARealProductOfThePackageItDependsOn() throws {
        let consumer = try Self.read("Examples/Consumer/Package.swift")
        let url = try #require(consumer.firstMatch(of: /\.package\(url: "([^"]+)"/)?.1)
        let identity = String(url.split(separator: "/").last!).replacingOccurrences(of: ".git", with: "")
        let product = try #require(consumer.firstMatch(of: /\.product\(name: "([^"]+)", package: "([^"]+)"\)/))
        #expect(String(product.2).lowercased() == identity.lowercased())
        let manifest = try Self.read("Package.swift")
        #expect(manifest.contains("name: \"\(identity)\""), "the package's manifest names it \(identity)")
        #expect(manifest.contains(".library(name: \"\(product.1)\""), "DelegateKit has a library product \(product.1)")
    }

    // The examples run, and do what the docs say.

    @Test func closureExamplesRun() throws {
        #expect(try sortIndicesByName() == [1, 2, 0])
        try describeTypesAndSignatures()
        #expect(try pairClosureSignature() == CSignature(.structure([.uint8, .double]), [.structure([.uint8, .double])]))
        #expect(try sortAscendingThenDescending() == [3, 2, 1])
        #expect(try countEntries(under: Self.root.appendingPathComponent("Examples/DocumentationExamples").path) >= 4)
        #expect(try parseErrors(of: "<a><b></a>").contains("document.xml:1: parser error : Opening and ending tag mismatch: b line 1 and a"))
        #expect(try parseErrors(of: "<a/>") == "")
    }

    @Test func tableExamplesRun() throws {
        let logging = try loggingTable()
        #expect(logging.delegate.descriptor.method(named: "log")?.signature.isVariadic == true)
        typealias LogThrough = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Void
        unsafeBitCast(try #require(fx_function("fx_log_kinds")), to: LogThrough.self)(logging.delegate.table.load(as: UnsafeRawPointer?.self), nil)
        #expect(logging.heard() == ["42 apples 1.50 1099511627776 x 4000000000 0x1234"])
        let glob = try globThroughClosures(Self.root.appendingPathComponent("Examples/DocumentationExamples").path + "/*.swift")
        #expect(glob.matches >= 3)
        #expect(glob.opened >= 1)
        let tables = try describeAndFillTables()
        #expect(tables.read == 4 && tables.version == 3)
        #expect(try typedTables() == 0)
        let slots = try keyPathSlots()
        #expect(slots.size == 4096 && slots.sector == 512 && slots.status == 0)  // 0: SQLITE_OK
        #expect(slots.reads == 1 && slots.sized && slots.emptied)
        #expect(try blockDelegateProperties() == false)
        #expect(try stacksAndKeys() == 0)
        #expect(try overrideCallingNext() == 5)
        #expect(try wrapDefaultVFS() >= 1)
        let observed = try observersAndForwarding()
        #expect(observed.writes == 0)  // the token was cancelled before the write
        #expect(observed.forwarded)
        let lifetimes = try singleClosureLifetimes()
        #expect(lifetimes.thread == 42 && lifetimes.triple == 42)
        let owner = try ownerAndErrors()
        #expect(owner.0 == 3 && owner.1 == -1)
    }

    @Test func callingCExamplesRun() throws {
        #expect(try formatWithSnprintf() == "42 apples at 1.50")
        #expect(try enableForeignKeys() == 1)
        #expect(try callWithRunTimeValues() == .signed(7))
        let kinds = try callWithOtherRunTimeValues()
        #expect(kinds.eight == .floatingPoint(8) && kinds.parsed == .unsigned(255))
        let sorted = try sortInScopes()
        #expect(sorted.ascending == [1, 2, 3])
        #expect(sorted.descending == [3, 2, 1])
        let throughCFunction = try sortThroughCFunction()
        #expect(throughCFunction.ascending == [-4, 3, 7, 9])
        #expect(throughCFunction.descending == [9, 7, 3, -4])
        let complex = try complexExponential()
        #expect(abs(complex.e.real + 1) < 1e-15 && abs(complex.e.imaginary) < 1e-15 && complex.length == 5)
    }

    /// The jump example runs in JPEGTests, in a child process (see there).
    @Test func waitExampleRuns() throws {
        #expect(try freeAfterRemoval())
    }
}
