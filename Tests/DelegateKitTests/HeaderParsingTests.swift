import DelegateKit
import DelegateKitExamples
import DelegateKitFixtures
import Foundation
import Testing

/// Text cut from a system header: the named typedef lines and `struct NAME { … };`.
func headerText(_ path: String, typedefLines: [String], structs: [String]) throws -> String {
    let header = try String(contentsOfFile: path, encoding: .utf8)
    var pieces: [String] = []
    for line in typedefLines {
        #expect(header.contains(line), "\(path) has `\(line)`")
        pieces.append(line)
    }
    for name in structs {
        let start = try #require(header.range(of: "struct \(name) {"), "\(path) defines struct \(name)")
        let end = try #require(header.range(of: "\n};", range: start.upperBound..<header.endIndex))
        pieces.append(String(header[start.lowerBound..<end.upperBound]))
    }
    return pieces.joined(separator: "\n")
}

let sqliteTypedefLines = [
    "typedef long long int sqlite_int64;", "typedef unsigned long long int sqlite_uint64;",
    "typedef sqlite_int64 sqlite3_int64;", "typedef sqlite_uint64 sqlite3_uint64;",
    "typedef const char *sqlite3_filename;", "typedef void (*sqlite3_syscall_ptr)(void);",
]

/// Descriptors read from C declarations, checked member by member against the C compiler.
@Suite struct HeaderParsingTests {
    func expectCompilerLayout(_ descriptor: ProtocolDescriptor, sourceLocation: SourceLocation = #_sourceLocation) {
        let name = descriptor.name
        #expect(descriptor.members.count == Int(fx_member_count(name)), "\(name) member count", sourceLocation: sourceLocation)
        #expect(descriptor.size == fx_struct_size(name), "\(name) size", sourceLocation: sourceLocation)
        for method in descriptor.methods {
            #expect(method.offset == fx_member_offset(name, method.name), "\(name).\(method.name)", sourceLocation: sourceLocation)
        }
        for field in descriptor.fields {
            #expect(field.offset == fx_member_offset(name, field.name), "\(name).\(field.name)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: ["sqlite3_io_methods", "sqlite3_vfs", "sqlite3_module"])
    func sqliteTablesFromSqlite3H(_ name: String) throws {
        let text = try headerText("/usr/include/sqlite3.h", typedefLines: sqliteTypedefLines, structs: [name])
        let descriptor = try ProtocolDescriptor(parsing: text, name: name)
        expectCompilerLayout(descriptor)
        #expect(!descriptor.methods.isEmpty)
    }

    @Test func parsedIoMethodsEqualTheHandWrittenOnes() throws {
        let text = try headerText("/usr/include/sqlite3.h", typedefLines: sqliteTypedefLines, structs: ["sqlite3_io_methods", "sqlite3_vfs"])
        #expect(try ProtocolDescriptor(parsing: text, name: "sqlite3_io_methods") == SQLiteDescriptors.ioMethods)
        #expect(try ProtocolDescriptor(parsing: text, name: "sqlite3_vfs") == SQLiteDescriptors.vfs)
        let io = try ProtocolDescriptor(parsing: text, name: "sqlite3_io_methods")
        #expect(io.method(named: "xRead")?.signature == CSignature(.int32, [.pointer, .pointer, .int32, .int64]))
        #expect(io.field(named: "iVersion")?.type == .int32)
    }

    @Test func glibcCookieTableFromItsHeader() throws {
        // The whole header: include guards and #include lines are skipped, function typedefs used behind
        // pointers become methods.
        let text = try String(contentsOfFile: Multiarch.includeDirectory + "/bits/types/cookie_io_functions_t.h", encoding: .utf8)
        let descriptor = try ProtocolDescriptor(parsing: text, name: "cookie_io_functions_t",
                                                typedefs: ["__ssize_t": .int64, "__off64_t": .int64])
        expectCompilerLayout(descriptor)
        #expect(descriptor.methods.map(\.name) == ["read", "write", "seek", "close"])
        #expect(descriptor.method(named: "read")?.signature == CSignature(.int64, [.pointer, .pointer, .size]))
        #expect(descriptor.method(named: "seek")?.signature == CSignature(.int32, [.pointer, .pointer, .int32]))
        // What the rest of the tests wrote by hand describes the same table.
        #expect(descriptor.methods.map(\.signature) == cookieIO.methods.map(\.signature))
    }

    /// libxml2's `xmlSAXHandler`, read from the text of its installed headers (VariadicSlotTests fills one).
    static func libxml2SAXHandler() throws -> ProtocolDescriptor {
        let directory = "/usr/include/libxml2/libxml/"
        let parser = try String(contentsOfFile: directory + "parser.h", encoding: .utf8)
        // The SAX callback typedefs and the handler struct, as parser.h writes them.
        // (libxml2 2.9 returns `xmlParserInputPtr`, 2.13 and later `xmlParserInput *`: start at the line.)
        let name = try #require(parser.range(of: "(*resolveEntitySAXFunc)"))
        let start = try #require(parser.range(of: "typedef ", options: .backwards, range: parser.startIndex..<name.lowerBound))
        let structStart = try #require(parser.range(of: "struct _xmlSAXHandler {"))
        let end = try #require(parser.range(of: "\n};", range: structStart.upperBound..<parser.endIndex))
        var text = String(parser[start.lowerBound..<end.upperBound])
        // The pointer typedefs those use (`typedef xmlEntity *xmlEntityPtr;` …) and the handler's typedef.
        var typedefs = ["typedef struct _xmlSAXHandler xmlSAXHandler;"]
        for header in ["tree.h", "parser.h", "xmlerror.h"] {
            let lines = try String(contentsOfFile: directory + header, encoding: .utf8).split(separator: "\n")
            for line in lines where line.hasPrefix("typedef ") && (line.hasSuffix("Ptr;") || line.contains("xmlStructuredErrorFunc)")) {
                typedefs.append(String(line))
            }
        }
        text = typedefs.joined(separator: "\n") + "\n" + text
        // No preprocessor here: expand the three macros these lines use as Linux's headers define them.
        text = text.replacingOccurrences(of: "XMLCDECL", with: "").replacingOccurrences(of: "XMLCALL", with: "")
            .replacingOccurrences(of: "LIBXML_ATTR_FORMAT(2,3)", with: "__attribute__((__format__(__printf__,2,3)))")

        return try ProtocolDescriptor(parsing: text, name: "xmlSAXHandler")
    }

    @Test func libxml2SAXHandlerFromItsHeaders() throws {
        let handler = try Self.libxml2SAXHandler()
        expectCompilerLayout(handler)
        #expect(handler.methods.count == 30)
        // The variadic error callbacks are methods too, whose closures read the rest of the arguments.
        #expect(handler.fields.map(\.name) == ["initialized", "_private"])
        #expect(handler.method(named: "error")?.signature == CSignature(.void, [.pointer, .pointer], isVariadic: true))
        #expect(handler.method(named: "startElementNs")?.signature
            == CSignature(.void, [.pointer, .pointer, .pointer, .pointer, .int32, .pointer, .int32, .int32, .pointer]))
        #expect(handler.method(named: "characters")?.signature == CSignature(.void, [.pointer, .pointer, .int32]))
    }

    @Test func theSubsetOfC() throws {
        let text = """
            #include <stddef.h>
            /* Several declarations; the struct to use is named. */
            typedef struct node node;             // forward-declared, used behind a pointer
            enum color { RED, GREEN = 4, BLUE = 1 << 3 };
            typedef unsigned long long int u64;
            typedef void (*logger)(void *context, const char *format, ...);
            struct point { short int x, y; };
            typedef struct {
                const volatile signed char tag;
                struct point corners[2];          // a struct array by value
                struct { double weight; _Bool on; } inner;   // nested definition
                enum color color;
                u64 big;
                long double precise;
                node *next;
                struct opaque *handle;            // unknown struct behind a pointer
                char name[16];
                logger log;                       // variadic: a method all the same
                int (*compare)(const void *, const void *);
                size_t (*measure)(node *, struct point);
            } shape_methods;
            int shape_area(const shape_methods *shape);   // a prototype, ignored
            """
        let shape = try ProtocolDescriptor(parsing: text, name: "shape_methods")
        #expect(shape.fields.map(\.name) == ["tag", "corners", "inner", "color", "big", "precise", "next", "handle", "name"])
        #expect(shape.fields.map(\.type) == [
            .int8, .structure([.structure([.int16, .int16]), .structure([.int16, .int16])]), .structure([.double, .bool]),
            .int32, .uint64, .longDouble, .pointer, .pointer, .structure(Array(repeating: .int8, count: 16)),
        ])
        #expect(shape.methods.map(\.name) == ["log", "compare", "measure"])
        #expect(shape.method(named: "log")?.signature == CSignature(.void, [.pointer, .pointer], isVariadic: true))
        #expect(shape.method(named: "measure")?.signature == CSignature(.size, [.pointer, .structure([.int16, .int16])]))
        // C's layout: tag 0, corners 2, inner 16, color 32, big 40, precise 48, next 64 … name 80, log 96.
        #expect(shape.fields.map(\.offset) == [0, 2, 16, 32, 40, 48, 64, 72, 80])
        #expect(shape.methods.map(\.offset) == [96, 104, 112])
        #expect(shape.size == 128)
    }

    @Test(arguments: [
        ("struct s { int flags : 3; };", "s", 1, 22, "bit-fields are not supported: their layout is the compiler's choice"),
        ("struct s { union { int i; float f; } u; };", "s", 1, 12, "unions are not supported: DelegateKit cannot lay out or pass a union by value"),
        ("struct s { union u value; };", "s", 1, 12, "the layout of 'union u' is unknown, so it can only be used behind a pointer ('union u *')"),
        ("struct s { struct missing m; };", "s", 1, 12, "the layout of 'struct missing' is unknown, so it can only be used behind a pointer ('struct missing *'); "
            + "by value it needs its definition in the text or `typedefs: [\"struct missing\": .structure([…])]`"),
        ("struct s { int a; int a; };", "s", 1, 23, "the struct already has a member named 'a'"),
        ("struct s { int a }", "s", 1, 18, "expected ';' after a struct member, found '}'"),
        ("struct s {\n  int a;\n  sqlite3_int64 b;\n};", "s", 3, 3, "the layout of 'sqlite3_int64' is unknown, so it can only be used behind a pointer ('sqlite3_int64 *'); "
            + "by value it needs `typedefs: [\"sqlite3_int64\": …]`"),
        ("struct s { int a; };", "t", 1, 21, "the text defines no struct named 't'"),
        ("int f(int x) { return x; }", "s", 1, 14, "function bodies are not supported; give declarations only"),
    ])
    func refusals(_ text: String, _ name: String, _ line: Int, _ column: Int, _ message: String) throws {
        let error = #expect(throws: DelegateError.self) { _ = try ProtocolDescriptor(parsing: text, name: name) }
        #expect(error == .syntax(message: message, text: text, line: line, column: column))
    }
}
