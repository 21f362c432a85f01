@testable import DelegateKit  // Locked
import DelegateKitFixtures
import Synchronization
import Testing

/// A Swift type that states a C layout it does not have: C's `struct { uint8_t; float; }` is 8 bytes,
/// this is 16.
struct MisstatedPair { var tag: UInt8; var value: Double }
extension MisstatedPair: CValue { static var cType: CType { .structure([.uint8, .float]) } }

/// A type that holds a reference, so its bytes cannot travel through C.
struct Referencing { var name: String }
extension Referencing: CValue { static var cType: CType { .structure([.pointer, .pointer]) } }

/// A protocol declaring two methods of one name.
let runDeclaredTwice = ProtocolDescriptor(name: "twice", methods: [
    MethodDescriptor(name: "run", signature: CSignature(.void, [])),
    MethodDescriptor(name: "run", signature: CSignature(.int32, [])),
])

let transformSignature = CSignature(.int64, [.pointer, .int64])

let voidArgumentReason = "argument 1 is void, which only a return type may be (a function without arguments has an empty list: `[]`)"
/// Where the loader found SQLite, which `dlerror` names in an unknown symbol's reason.
let sqlitePath = Multiarch.loadedPath(of: "libsqlite3.so.0", containing: "sqlite3_libversion")

/// One misuse the API detects: the call that makes it, and the exact error it produces.
struct Misuse: Sendable, CustomTestStringConvertible {
    let name: String
    let action: @Sendable () throws -> Void
    let expected: DelegateError
    /// The error's `description`, word for word: what a user reads.
    let message: String
    var testDescription: String { name }
}

/// Every misuse the API can detect that is reported as an error, with the error and its message (a
/// `@Slot` that does not fit its table and a function pointer type that does not fit are thrown too: see
/// the tests below, TypedDelegateTests and FunctionPointerTypeTests); the README links this table.
let misuses: [Misuse] = [
    Misuse(
        name: "unknown method",
        action: { try DynamicDelegate(protocol: cookieIO).implement("flush") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 } },
        expected: .unknownMethod("flush", protocol: "cookie_io_functions_t"),
        message: "cookie_io_functions_t has no method named 'flush'"),
    Misuse(
        name: "misspelt method name",
        action: { try DynamicDelegate(protocol: pluginProtocol).implement("transfrom") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x } },
        expected: .unknownMethod("transfrom", protocol: "fx_plugin", suggestions: ["transform"]),
        message: "fx_plugin has no method named 'transfrom'; did you mean 'transform'?"),
    Misuse(
        name: "method name in another case",
        action: { try DynamicDelegate(protocol: pluginProtocol).implement("Log") { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) in } },
        expected: .unknownMethod("Log", protocol: "fx_plugin", suggestions: ["log"]),
        message: "fx_plugin has no method named 'Log'; did you mean 'log'?"),
    Misuse(
        name: "a data member given a closure",
        action: { try DynamicDelegate(protocol: pluginProtocol).implement("version") { () -> Int32 in 0 } },
        expected: .notAMethod("version", protocol: "fx_plugin", type: .int32),
        message: "member 'version' of fx_plugin is a data member of C type `int32_t`, not a method: write it with setField(_:_:)"),
    Misuse(
        name: "closure with another C argument type (implement)",
        action: {
            try DynamicDelegate(protocol: pluginProtocol).implement("transform") { (_: UnsafeMutableRawPointer?, x: Int32) -> Int64 in Int64(x) }
        },
        expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
            actual: CSignature(.int64, [.pointer, .int32])),
        message: "method 'transform' of fx_plugin has C signature `int64_t (void *, int64_t)`, "
            + "but the closure has C signature `int64_t (void *, int32_t)`"),
    Misuse(
        name: "closure with a C result type of another signedness",
        action: { try DynamicDelegate(protocol: cookieIO).implement("close") { (_: UnsafeMutableRawPointer?) -> UInt32 in 0 } },
        expected: .signatureMismatch(method: "close", protocol: "cookie_io_functions_t", expected: CSignature(.int32, [.pointer]),
            actual: CSignature(.uint32, [.pointer])),
        message: "method 'close' of cookie_io_functions_t has C signature `int32_t (void *)`, but the closure has C signature `uint32_t (void *)`"),
    Misuse(
        name: "closure with another number of arguments",
        action: { try DynamicDelegate(protocol: cookieIO).implement("close") { (_: UnsafeMutableRawPointer?, _: Int32) -> Int32 in 0 } },
        expected: .signatureMismatch(method: "close", protocol: "cookie_io_functions_t", expected: CSignature(.int32, [.pointer]),
            actual: CSignature(.int32, [.pointer, .int32])),
        message: "method 'close' of cookie_io_functions_t has C signature `int32_t (void *)`, "
            + "but the closure has C signature `int32_t (void *, int32_t)`"),
    Misuse(
        name: "closure taking Int where C says uint64_t (only size_t accepts Int)",
        action: {
            let exact = ProtocolDescriptor(name: "t", methods: [MethodDescriptor(name: "f", signature: CSignature(.uint64, [.uint64]))])
            try DynamicDelegate(protocol: exact).implement("f") { (n: Int) -> UInt64 in UInt64(n) }
        },
        expected: .signatureMismatch(method: "f", protocol: "t", expected: CSignature(.uint64, [.uint64]),
            actual: CSignature(.uint64, [.int64])),
        message: "method 'f' of t has C signature `uint64_t (uint64_t)`, but the closure has C signature `uint64_t (int64_t)`"),
    Misuse(
        name: "closure with another C signature (override)",
        action: {
            try DynamicDelegate(protocol: pluginProtocol).override("transform") {
                (next: Next<UnsafeMutableRawPointer?, Int64, Double>, context: UnsafeMutableRawPointer?, x: Int64) -> Double in next(context, x)
            }
        },
        expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
            actual: CSignature(.double, [.pointer, .int64])),
        message: "method 'transform' of fx_plugin has C signature `int64_t (void *, int64_t)`, "
            + "but the closure has C signature `double (void *, int64_t)`"),
    Misuse(
        name: "observer with other argument types",
        action: { _ = try DynamicDelegate(protocol: pluginProtocol).observe("transform", .before) { (_: UnsafeMutableRawPointer?, _: Double) in } },
        expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
            actual: CSignature(.int64, [.pointer, .double])),
        message: "method 'transform' of fx_plugin has C signature `int64_t (void *, int64_t)`, "
            + "but the closure has C signature `int64_t (void *, double)`"),
    Misuse(
        name: "current implementation asked for as another type",
        action: { _ = try DynamicDelegate(protocol: pluginProtocol).implementation(for: "transform", as: ((Int64) -> Int64).self) },
        expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
            actual: CSignature(.int64, [.int64])),
        message: "method 'transform' of fx_plugin has C signature `int64_t (void *, int64_t)`, but the closure has C signature `int64_t (int64_t)`"),
    Misuse(
        name: "current implementation asked for with a result C cannot return",
        action: { _ = try DynamicDelegate(protocol: pluginProtocol).implementation(for: "transform", as: ((UnsafeMutableRawPointer?, Int64) -> String).self) },
        expected: .functionTypeMismatch(
            call: "DynamicDelegate.implementation(for: \"transform\", as:)", signature: transformSignature,
            requested: "(Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.String",
            reason: "its result `Swift.String` is not a C type: use a CValue, or Void for a `void` method"),
        message: "DynamicDelegate.implementation(for: \"transform\", as:): "
            + "`(Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.String` does not fit the "
            + "C signature `int64_t (void *, int64_t)`: its result `Swift.String` is not a C type: use a CValue, or Void for a `void` method"),
    Misuse(
        name: "typed table: closure of another Swift type",
        action: { try TypedDelegate(for: fx_plugin.self).implement(\.transform) { (_: UnsafeRawPointer?, x: Int64) -> Int64 in x } },
        expected: .typeMismatch(member: "transform", protocol: "fx_plugin",
            expected: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.Int64",
            actual: "@convention(c) (Swift.Optional<Swift.UnsafeRawPointer>, Swift.Int64) -> Swift.Int64"),
        message: "member 'transform' of fx_plugin has type "
            + "`@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.Int64`, "
            + "but the closure has type `@convention(c) (Swift.Optional<Swift.UnsafeRawPointer>, Swift.Int64) -> Swift.Int64`"),
    Misuse(
        name: "typed table: key path to a data member",
        action: { try TypedDelegate(for: fx_plugin.self).implement(\.version) { () -> Int32 in 0 } },
        expected: .invalidMember("version", protocol: "fx_plugin",
            reason: "it is a data member, not a function pointer; set it through the typed table"),
        message: "member 'version' of fx_plugin cannot be used: it is a data member, not a function pointer; set it through the typed table"),
    Misuse(
        name: "typed table: a Swift closure member",
        action: { try TypedDelegate(for: ClosureTable.self).implement(\.apply) { (x: Int32) -> Int32 in x } },
        expected: .invalidMember("run", protocol: "ClosureTable", reason: "its type `Swift.Optional<(Swift.Int32) -> Swift.Int32>` "
            + "is a Swift closure, not a C function pointer; declare it `@convention(c)` for C to call it"),
        message: "member 'run' of ClosureTable cannot be used: its type `Swift.Optional<(Swift.Int32) -> Swift.Int32>` is a Swift closure, "
            + "not a C function pointer; declare it `@convention(c)` for C to call it"),
    Misuse(
        name: "typed table: a struct by value that is not a CValue (key path)",
        action: { _ = try TypedDelegate(for: fx_geometry.self).methodName(of: \.area) },
        expected: .invalidMember("area", protocol: "fx_geometry", reason: extentRefusal),
        message: "member 'area' of fx_geometry cannot be used: " + extentRefusal),
    Misuse(
        name: "typed table: a struct by value that is not a CValue (by name)",
        action: { try TypedDelegate(for: fx_geometry.self).implement("area") { (x: Int64) -> Int64 in x } },
        expected: .invalidMember("area", protocol: "fx_geometry", reason: extentRefusal),
        message: "member 'area' of fx_geometry cannot be used: " + extentRefusal),
    Misuse(
        name: "function pointer asked for as another C function type",
        action: {
            _ = try CClosure { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
                .functionPointer(as: (@convention(c) (UnsafeMutableRawPointer?, Int32) -> Int64).self)
        },
        expected: .functionTypeMismatch(call: "CClosure.functionPointer(as:)", signature: transformSignature,
            requested: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int32) -> Swift.Int64",
            reason: "its parameter 2 is `Swift.Int32` (C type `int32_t`), but the closure's is `int64_t`"),
        message: "CClosure.functionPointer(as:): "
            + "`@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int32) -> Swift.Int64` does not fit the C "
            + "signature `int64_t (void *, int64_t)`: its parameter 2 is `Swift.Int32` (C type `int32_t`), but the closure's is `int64_t`"),
    Misuse(
        name: "function pointer asked for as a type that is no C function",
        action: {
            _ = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }.functionPointer(as: OpaquePointer.self)
        },
        expected: .functionTypeMismatch(call: "CCallback.functionPointer(as:)", signature: transformSignature,
            requested: "Swift.OpaquePointer",
            reason: "it is not a @convention(c) function type (pass `address` where C takes a `void *`)"),
        message: "CCallback.functionPointer(as:): `Swift.OpaquePointer` does not fit the C signature "
            + "`int64_t (void *, int64_t)`: it is not a @convention(c) function type (pass `address` where C takes a `void *`)"),
    Misuse(
        name: "@Slot that does not fit, with the throwing initializer",
        action: { _ = try ReportingMisdeclaredStream() },
        expected: .slotMismatch(property: "ReportingMisdeclaredStream.onClose", slot: "\"close\"",
            error: .signatureMismatch(method: "close", protocol: "cookie_io_functions_t",
                                      expected: CSignature(.int32, [.pointer]), actual: CSignature(.int64, [.pointer]))),
        message: "ReportingMisdeclaredStream.onClose (@Slot(\"close\")): "
            + "method 'close' of cookie_io_functions_t has C signature `int32_t (void *)`, but the closure has C signature `int64_t (void *)`"),
    Misuse(
        name: "two members with one name",
        action: { try runDeclaredTwice.validate() },
        expected: .duplicateMember("run", protocol: "twice"),
        message: "twice declares more than one member named 'run'"),
    Misuse(
        name: "implementing in a descriptor with two members of one name",
        action: { try DynamicDelegate(protocol: runDeclaredTwice).implement("run") { () in } },
        expected: .duplicateMember("run", protocol: "twice"),
        message: "twice declares more than one member named 'run'"),
    Misuse(
        name: "validating a delegate whose descriptor has two members of one name",
        action: { try DynamicDelegate(protocol: runDeclaredTwice).validate() },
        expected: .duplicateMember("run", protocol: "twice"),
        message: "twice declares more than one member named 'run'"),
    Misuse(
        name: "a data member and a method with one name",
        action: {
            try ProtocolDescriptor(name: "m", members: [
                .field("x", .int32), .method(MethodDescriptor(name: "x", signature: CSignature(.void, []))),
            ]).validate()
        },
        expected: .duplicateMember("x", protocol: "m"),
        message: "m declares more than one member named 'x'"),
    Misuse(
        name: "a void data member",
        action: { try ProtocolDescriptor(name: "v", members: [.field("nothing", .void)]).validate() },
        expected: .invalidMember("nothing", protocol: "v", reason: "its type is void, which only a return type may be"),
        message: "member 'nothing' of v cannot be used: its type is void, which only a return type may be"),
    Misuse(
        name: "a signature with a void argument",
        action: { _ = try CClosure(signature: CSignature(.int32, [.int32, .void])) { _ in } },
        expected: .invalidSignature(CSignature(.int32, [.int32, .void]), reason: "argument 2 is void, which only a return type may be"),
        message: "C signature `int32_t (int32_t, void)` cannot be used: argument 2 is void, which only a return type may be"),
    Misuse(
        // `CSignature(.int32, [])` is spelled `int32_t (void)` too: preparing it first must not let this in.
        name: "a single void argument, once the signature without arguments was prepared",
        action: {
            _ = try CClosure(signature: CSignature(.int32, [])) { _ in }
            _ = try CClosure(signature: CSignature(.int32, [.void])) { _ in }
        },
        expected: .invalidSignature(CSignature(.int32, [.void]), reason: voidArgumentReason),
        message: "C signature `int32_t (void)` cannot be used: \(voidArgumentReason)"),
    Misuse(
        name: "a single void argument for a C function, once the one without arguments was prepared",
        action: {
            let rand = try CLibrary.process.address(of: "rand")
            _ = try CFunction(address: rand, signature: CSignature(.int32, []))
            _ = try CFunction(address: rand, signature: CSignature(.int32, [.void]))
        },
        expected: .invalidSignature(CSignature(.int32, [.void]), reason: voidArgumentReason),
        message: "C signature `int32_t (void)` cannot be used: \(voidArgumentReason)"),
    Misuse(
        name: "a signature returning a struct with no members",
        action: { _ = try CClosure(signature: CSignature(.structure([]), [])) { _ in } },
        expected: .invalidSignature(CSignature(.structure([]), []), reason: "the return type is a struct with no members, which C does not allow"),
        message: "C signature `struct { } (void)` cannot be used: the return type is a struct with no members, which C does not allow"),
    Misuse(
        name: "a stated C layout Swift does not have",
        action: { _ = try CClosure { (p: MisstatedPair) -> Int32 in Int32(p.tag) } },
        expected: .layoutMismatch(type: "DelegateKitTests.MisstatedPair", cType: .structure([.uint8, .float]), swiftSize: 16, swiftAlignment: 8),
        message: "DelegateKitTests.MisstatedPair states C type `struct { uint8_t; float; }` (size 8, alignment 4), "
            + "but its Swift layout has size 16, alignment 8"),
    Misuse(
        name: "a type holding references by value",
        action: { _ = try CClosure { (r: Referencing) -> Int32 in Int32(r.name.count) } },
        expected: .notTrivial(type: "DelegateKitTests.Referencing"),
        message: "DelegateKitTests.Referencing holds references or other non-trivial values, so it cannot travel through C by value"),
    Misuse(
        name: "data member set with another C type",
        action: { try DynamicDelegate(protocol: pluginProtocol).setField("version", Int64(1)) },
        expected: .fieldTypeMismatch(field: "version", protocol: "fx_plugin", expected: .int32, actual: .int64),
        message: "data member 'version' of fx_plugin has C type `int32_t`, but the value has C type `int64_t`"),
    Misuse(
        name: "data member read as another C type",
        action: { _ = try DynamicDelegate(protocol: pluginProtocol).field("version", as: UInt32.self) },
        expected: .fieldTypeMismatch(field: "version", protocol: "fx_plugin", expected: .int32, actual: .uint32),
        message: "data member 'version' of fx_plugin has C type `int32_t`, but the value has C type `uint32_t`"),
    Misuse(
        name: "unknown data member",
        action: { try DynamicDelegate(protocol: cookieIO).setField("iVersion", Int32(1)) },
        expected: .unknownField("iVersion", protocol: "cookie_io_functions_t"),
        message: "cookie_io_functions_t has no data member named 'iVersion'"),
    Misuse(
        name: "misspelt data member",
        action: { try DynamicDelegate(protocol: pluginProtocol).setField("verison", Int32(1)) },
        expected: .unknownField("verison", protocol: "fx_plugin", suggestions: ["version"]),
        message: "fx_plugin has no data member named 'verison'; did you mean 'version'?"),
    Misuse(
        name: "a method set as a data member",
        action: { try DynamicDelegate(protocol: pluginProtocol).setField("transform", Int64(1)) },
        expected: .notAField("transform", protocol: "fx_plugin", signature: transformSignature),
        message: "member 'transform' of fx_plugin is a method with C signature `int64_t (void *, int64_t)`, not a data member: "
            + "give it a closure with implement(_:_:)"),
    Misuse(
        name: "a method read as a data member",
        action: { _ = try DynamicDelegate(protocol: pluginProtocol).field("transform", as: Int64.self) },
        expected: .notAField("transform", protocol: "fx_plugin", signature: transformSignature),
        message: "member 'transform' of fx_plugin is a method with C signature `int64_t (void *, int64_t)`, not a data member: "
            + "give it a closure with implement(_:_:)"),
    Misuse(
        name: "forwarding loop",
        action: {
            let a = DynamicDelegate(protocol: pluginProtocol), b = DynamicDelegate(protocol: pluginProtocol)
            try a.setForwardingTarget(.delegate(b))
            try b.setForwardingTarget(.delegate(a))
        },
        expected: .forwardingLoop(["fx_plugin", "fx_plugin", "fx_plugin"]),
        message: "forwarding would loop: fx_plugin -> fx_plugin -> fx_plugin"),
    Misuse(
        name: "required method without implementation",
        action: { try DynamicDelegate(protocol: cookieIO).validate() },
        expected: .missingRequiredMethods(["close"], protocol: "cookie_io_functions_t"),
        message: "cookie_io_functions_t requires method 'close', which has no implementation"),
    Misuse(
        name: "unparsable signature: the text ends inside the parameters",
        action: { _ = try CSignature(parsing: "int (void *") },
        expected: .syntax(message: "expected ')' or ',' after a parameter, found the end of the text", text: "int (void *", line: 1, column: 12),
        message: """
            C syntax error at line 1, column 12: expected ')' or ',' after a parameter, found the end of the text
                int (void *
                           ^
            """),
    Misuse(
        name: "unparsable signature: a parameter missing",
        action: { _ = try CSignature(parsing: "int (void *, )") },
        expected: .syntax(message: "expected a type, found ')'", text: "int (void *, )", line: 1, column: 14),
        message: """
            C syntax error at line 1, column 14: expected a type, found ')'
                int (void *, )
                             ^
            """),
    Misuse(
        name: "unknown type by value",
        action: { _ = try CSignature(parsing: "int (sqlite3_int64)") },
        expected: .syntax(message: "the layout of 'sqlite3_int64' is unknown, so it can only be used behind a pointer ('sqlite3_int64 *'); "
            + "by value it needs `typedefs: [\"sqlite3_int64\": …]`",
            text: "int (sqlite3_int64)", line: 1, column: 6),
        message: """
            C syntax error at line 1, column 6: the layout of 'sqlite3_int64' is unknown, so it can only be used behind a pointer ('sqlite3_int64 *'); by value it needs `typedefs: ["sqlite3_int64": …]`
                int (sqlite3_int64)
                     ^
            """),
    Misuse(
        name: "a variadic method implemented by a closure that is not variadic",
        action: {
            let logger = try ProtocolDescriptor(parsing: "struct logger { void (*log)(void *, const char *, ...); };", name: "logger")
            try DynamicDelegate(protocol: logger).implement("log") { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) in }
        },
        expected: .signatureMismatch(
            method: "log", protocol: "logger", expected: CSignature(.void, [.pointer, .pointer], isVariadic: true),
            actual: CSignature(.void, [.pointer, .pointer])),
        message: "method 'log' of logger has C signature `void (void *, void *, ...)`, "
            + "but the closure has C signature `void (void *, void *)`"),
    Misuse(
        name: "a closure whose value C cannot receive, for a method returning a value",
        action: { try DynamicDelegate(protocol: pluginProtocol).implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) in "\(value)" } },
        expected: .signatureMismatch(
            method: "transform", protocol: "fx_plugin", expected: transformSignature, actual: CSignature(.void, [.pointer, .int64])),
        message: "method 'transform' of fx_plugin has C signature `int64_t (void *, int64_t)`, "
            + "but the closure has C signature `void (void *, int64_t)`"),
    Misuse(
        name: "a variadic closure with a struct before the dots",
        action: { _ = try CClosure(signature: CSignature(.void, [.structure([.int32])], isVariadic: true)) { _ in } },
        expected: .invalidSignature(
            CSignature(.void, [.structure([.int32])], isVariadic: true),
            reason: "argument 1 of a variadic closure is `struct { int32_t; }`: its arguments before `...` may be integers, "
                + "pointers, float or double"),
        message: "C signature `void (struct { int32_t; }, ...)` cannot be used: argument 1 of a variadic closure is "
            + "`struct { int32_t; }`: its arguments before `...` may be integers, pointers, float or double"),
    Misuse(
        name: "bit-field",
        action: { _ = try ProtocolDescriptor(parsing: "struct s { int a : 3; };", name: "s") },
        expected: .syntax(message: "bit-fields are not supported: their layout is the compiler's choice",
            text: "struct s { int a : 3; };", line: 1, column: 18),
        message: """
            C syntax error at line 1, column 18: bit-fields are not supported: their layout is the compiler's choice
                struct s { int a : 3; };
                                 ^
            """),
    Misuse(
        name: "union by value",
        action: { _ = try ProtocolDescriptor(parsing: "struct s { union { int a; float b; } u; };", name: "s") },
        expected: .syntax(message: "unions are not supported: DelegateKit cannot lay out or pass a union by value",
            text: "struct s { union { int a; float b; } u; };", line: 1, column: 12),
        message: """
            C syntax error at line 1, column 12: unions are not supported: DelegateKit cannot lay out or pass a union by value
                struct s { union { int a; float b; } u; };
                           ^
            """),
    Misuse(
        name: "struct the text does not define",
        action: { _ = try ProtocolDescriptor(parsing: "struct s { int a; };", name: "t") },
        expected: .syntax(message: "the text defines no struct named 't'", text: "struct s { int a; };", line: 1, column: 21),
        message: """
            C syntax error at line 1, column 21: the text defines no struct named 't'
                struct s { int a; };
                                    ^
            """),
    Misuse(
        name: "a library that does not exist",
        action: { _ = try CLibrary(path: "libdelegatekit-nope.so") },
        expected: .libraryNotFound(
            path: "libdelegatekit-nope.so", reason: "libdelegatekit-nope.so: cannot open shared object file: No such file or directory"),
        message: "cannot open library 'libdelegatekit-nope.so': libdelegatekit-nope.so: cannot open shared object file: No such file or directory"),
    Misuse(
        name: "unknown symbol",
        action: { _ = try CFunction("sqlite3_opne", declaration: "int (void)", in: CLibrary(path: "libsqlite3.so.0")) },
        expected: .symbolNotFound(
            "sqlite3_opne", library: "'libsqlite3.so.0'", reason: "\(sqlitePath): undefined symbol: sqlite3_opne"),
        message: "no symbol 'sqlite3_opne' in 'libsqlite3.so.0': \(sqlitePath): undefined symbol: sqlite3_opne"),
    Misuse(
        name: "a call with too few arguments",
        action: {
            let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
            let _: Int32 = try snprintf.call(Int32(1))
        },
        expected: .callMismatch(
            function: "'snprintf'", declaration: "int32_t (void *, size_t, void *, ...)", call: CSignature(.int32, [.int32]),
            reason: "it takes at least 3 arguments, the call passes 1"),
        message: "'snprintf' has C signature `int32_t (void *, size_t, void *, ...)`, "
            + "but the call has C signature `int32_t (int32_t)`: it takes at least 3 arguments, the call passes 1"),
    Misuse(
        name: "a call with too many arguments",
        action: {
            let labs = try CFunction("labs", declaration: "long labs(long)")
            let _: Int = try labs.call(-3, 4)
        },
        expected: .callMismatch(
            function: "'labs'", declaration: "int64_t (int64_t)", call: CSignature(.int64, [.int64, .int64]),
            reason: "it takes 1 argument, the call passes 2"),
        message: "'labs' has C signature `int64_t (int64_t)`, but the call has C signature `int64_t (int64_t, int64_t)`: it takes 1 argument, "
            + "the call passes 2"),
    Misuse(
        name: "a call with an argument of another type",
        action: {
            let labs = try CFunction("labs", declaration: "long labs(long)")
            let _: Int = try labs.call(Int32(-3))
        },
        expected: .callMismatch(
            function: "'labs'", declaration: "int64_t (int64_t)", call: CSignature(.int64, [.int32]),
            reason: "argument 1 is `int32_t`, where the function takes `int64_t`"),
        message: "'labs' has C signature `int64_t (int64_t)`, but the call has C signature `int64_t (int32_t)`: argument 1 is `int32_t`, "
            + "where the function takes `int64_t`"),
    Misuse(
        name: "a call asking for another result type",
        action: {
            let labs = try CFunction("labs", declaration: "long labs(long)")
            let _: Double = try labs.call(-3)
        },
        expected: .callMismatch(
            function: "'labs'", declaration: "int64_t (int64_t)", call: CSignature(.double, [.int64]),
            reason: "the result is asked for as `double`, but the function returns `int64_t`"),
        message: "'labs' has C signature `int64_t (int64_t)`, but the call has C signature `double (int64_t)`: "
            + "the result is asked for as `double`, but the function returns `int64_t`"),
    Misuse(
        name: "a run-time value its type cannot hold",
        action: { _ = try CFunction("abs", declaration: "int abs(int)").call([.signed(1 << 40)]) },
        expected: .valueMismatch(function: "'abs'", argument: 1, type: .int32, value: "1099511627776"),
        message: "argument 1 of 'abs' has C type `int32_t`, which cannot hold the value 1099511627776"),
    Misuse(
        name: "a variadic argument C cannot take",
        action: {
            _ = try CFunction(address: fixture("fx_sum_variadic"), declaration: "double (const char *, ...)", name: "fx_sum_variadic")
                .call([.pointer(0), .floatingPoint(0.5)], variadicTypes: [.float])
        },
        expected: .variadicArgument(
            function: "'fx_sum_variadic'", argument: 2, type: .float, reason: "C passes it as `double`; state that type"),
        message: "argument 2 of 'fx_sum_variadic' is variadic, and C never passes `float` through `...`: C passes it as `double`; state that type"),
    Misuse(
        name: "variadic arguments to a function that takes none",
        action: { _ = try CFunction("abs", declaration: "int abs(int)").call([.signed(1), .signed(2)], variadicTypes: [.int32]) },
        expected: .callMismatch(
            function: "'abs'", declaration: "int32_t (int32_t)", call: CSignature(.int32, [.int32, .int32]),
            reason: "it takes 1, the call passes 2 (1 variadic)"),
        message: "'abs' has C signature `int32_t (int32_t)`, but the call has C signature `int32_t (int32_t, int32_t)`: it takes 1, "
            + "the call passes 2 (1 variadic)"),
    Misuse(
        name: "a variadic function called catching jumps",
        action: {
            _ = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
                .call(catchingJumpsTo: JumpTarget(), UnsafeMutablePointer<CChar>?.none, 0, UnsafePointer<CChar>?.none, returning: Int32.self)
        },
        expected: .callMismatch(
            function: "'snprintf'", declaration: "int32_t (void *, size_t, void *, ...)",
            call: CSignature(.int32, [.pointer, .int64, .pointer]), reason: "a variadic function cannot be called catching jumps"),
        message: "'snprintf' has C signature `int32_t (void *, size_t, void *, ...)`, but the call has C signature "
            + "`int32_t (void *, int64_t, void *)`: a variadic function cannot be called catching jumps"),
    Misuse(
        name: "a jump target two calls would share",
        action: {
            // A call catching jumps to `target` reaches a closure that makes another such call with it.
            let target = JumpTarget()
            typealias Transform = @convention(c) (UnsafePointer<fx_plugin>?, UnsafeMutableRawPointer?, Int64, UnsafeMutablePointer<Bool>?) -> Int64
            let transform = try CFunction(address: unsafeBitCast(fx_plugin_transform as Transform, to: UnsafeRawPointer.self),
                                          declaration: "int64_t (void *, void *, int64_t, void *)", name: "fx_plugin_transform")
            let plugin = DynamicDelegate(protocol: pluginProtocol)
            let inner = Locked<DelegateError?>(nil)
            nonisolated(unsafe) let table = plugin.table  // a C table: C reads it from any thread
            nonisolated(unsafe) let called = UnsafeMutablePointer<Bool>.allocate(capacity: 1)  // fx_plugin_transform writes it
            defer { called.deallocate() }
            try plugin.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                do {
                    _ = try transform.call(catchingJumpsTo: target, table, UnsafeMutableRawPointer?.none, x, called, returning: Int64.self)
                } catch {
                    inner.withLock { $0 = error as? DelegateError }
                }
                return x
            }
            _ = try transform.call(catchingJumpsTo: target, table, UnsafeMutableRawPointer?.none, Int64(1), called, returning: Int64.self)
            if let error = inner.withLock({ $0 }) { throw error }
        },
        expected: .jumpTargetInUse(function: "'fx_plugin_transform'"),
        message: "'fx_plugin_transform' cannot be called catching jumps to a JumpTarget that another call still uses: "
            + "give each call in progress a target of its own"),
    Misuse(
        name: "waiting for removed calls from inside one",
        action: {
            let plugin = DynamicDelegate(protocol: pluginProtocol)
            let refusal = Locked<DelegateError?>(nil)
            try plugin.implement("transform") { [unowned plugin] (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                plugin.removeImplementation(for: "transform")
                do { _ = try plugin.waitForRemovedCalls(timeout: .seconds(1)) } catch { refusal.withLock { $0 = error as? DelegateError } }
                return x
            }
            _ = transform(plugin, 1)
            if let error = refusal.withLock({ $0 }) { throw error }
        },
        expected: .waitingForOwnCall(method: "transform", protocol: "fx_plugin"),
        message: "waitForRemovedCalls(timeout:) was called inside a call of method 'transform' of fx_plugin that it "
            + "would wait for, which could never end: wait outside the removed closure, or do not wait"),
]

/// A `@Slot` whose closure type does not fit its method; creating one must stop with a clear message.
final class MisdeclaredStream: BlockDelegate {
    @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int64)?
    init() throws { try super.init(protocol: cookieIO) }
}

/// A `@Slot` that names no method of the protocol.
final class MisnamedStream: BlockDelegate {
    @Slot("flush") var onFlush: ((UnsafeMutableRawPointer?) -> Int32)?
    init() throws { try super.init(protocol: cookieIO) }
}

@Suite struct BadInputTableTests {
    @Test(arguments: misuses)
    func misuseGivesItsExactError(_ misuse: Misuse) {
        let error = #expect(throws: DelegateError.self, "\(misuse.name)") { try misuse.action() }
        #expect(error == misuse.expected, "\(misuse.name)")
        #expect(error?.description == misuse.message, "\(misuse.name)")
    }

    @Test func aSyntaxErrorWithALineOutsideItsTextStillDescribesItself() {
        // The case may carry any line number; one outside the text has no source line to show.
        #expect(DelegateError.syntax(message: "m", text: "x", line: 0, column: 0).description.hasPrefix("C syntax error at line 0"))
        #expect(DelegateError.syntax(message: "m", text: "x", line: 9, column: 1).description.hasPrefix("C syntax error at line 9"))
    }

    @Test func everyErrorNamesWhatWasAskedFor() {
        for misuse in misuses {
            let text = misuse.expected.description
            #expect(!text.isEmpty && !text.contains("DelegateError"), "\(misuse.name): \(text)")
        }
    }

    /// A closure whose value C cannot receive makes a function returning `void`, its value discarded, as
    /// Swift discards a one-expression closure's where `Void` is expected: in the fixed-arity forms, the
    /// parameter-pack form (eight arguments) and the variadic one.
    @Test func aValueCCannotReceiveIsDiscarded() throws {
        let seen = Mutex<Set<Int32>>([])
        let insert = try CClosure { (value: Int32) in seen.withLock { $0.insert(value) } }
        #expect(insert.signature == CSignature(.void, [.int32]))
        try insert.functionPointer(as: (@convention(c) (Int32) -> Void).self)(7)
        let wide = try CClosure { (a: Int32, _: Int32, _: Int32, _: Int32, _: Int32, _: Int32, _: Int32, _: Int32) in
            seen.withLock { $0.insert(a) }
        }
        #expect(wide.signature == CSignature(.void, Array(repeating: .int32, count: 8)))
        try wide.functionPointer(as: (@convention(c) (Int32, Int32, Int32, Int32, Int32, Int32, Int32, Int32) -> Void).self)(8, 0, 0, 0, 0, 0, 0, 0)
        let variadic = try CClosure { (value: Int32, _: CVariadicArguments) in seen.withLock { $0.insert(value) } }
        #expect(variadic.signature == CSignature(.void, [.int32], isVariadic: true))
        #expect(seen.withLock { $0 } == [7, 8])
    }

    /// What a closure may differ in from the C signature and still fill a slot; the table has what it may not.
    @Test func compatibilityRules() throws {
        let delegate = DynamicDelegate(protocol: cookieIO)
        // Pointers are interchangeable, whatever they point to and whether or not they are optional.
        try delegate.implement("read") { (_: OpaquePointer?, _: UnsafeMutableRawPointer, n: Int) -> Int in n }
        // size_t accepts Int (as Swift imports it) and UInt; ssize_t is Int.
        try delegate.implement("read") { (_: UnsafeMutableRawPointer?, _: UnsafeMutablePointer<CChar>?, n: UInt) -> Int in Int(n) }
        // uint64_t is not size_t: it accepts only UInt64/UInt.
        let exact = ProtocolDescriptor(name: "t", methods: [MethodDescriptor(name: "f", signature: CSignature(.uint64, [.uint64]))])
        let strict = DynamicDelegate(protocol: exact)
        try strict.implement("f") { (n: UInt) -> UInt64 in UInt64(n) }
        // int and unsigned are distinct; char is int8_t; bool is not uint8_t.
        #expect(try CSignature(parsing: "char (unsigned, int)") == CSignature(.int8, [.uint32, .int32]))
        #expect(!CType.bool.accepts(.uint8))
        #expect(!CType.int32.accepts(.uint32))
    }

    @Test func failedImplementChangesNothing() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
        let before = delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.transform
        #expect(throws: DelegateError.self) {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int32) -> Int64 in Int64(value) }
        }
        #expect(throws: DelegateError.self) {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: MisstatedPair) -> Int64 in 0 }
        }
        let after = delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.transform
        #expect(unsafeBitCast(before, to: UnsafeRawPointer?.self) == unsafeBitCast(after, to: UnsafeRawPointer?.self))
        #expect(after?(nil, 1) == 2)
    }

    /// Misuses with defined, non-error outcomes: they are safe, and these say what they do.
    @Test func misusesWithDefinedOutcomes() throws {
        // A one-shot callback called twice: the second call gets the default value; the body ran once.
        let ran = Atomic<Int>(0)
        let once = try CCallback.oneShot { (x: Int64) -> Int64 in
            ran.add(1, ordering: .relaxed)
            return x + 1
        }
        let function: @convention(c) (Int64) -> Int64 = try once.functionPointer()
        #expect(function(1) == 2)
        #expect(function(1) == 0)
        #expect(ran.load(ordering: .relaxed) == 1)

        // A `once` implementation serves one call; the next call finds the slot as if it had none.
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform", once: true) { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x * 10 }
        var called = false
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        #expect(fx_plugin_transform(table, nil, 3, &called) == 30)
        #expect(fx_plugin_transform(table, nil, 3, &called) == 3)
        #expect(!called)

        // A cancelled observation token: cancelling again does nothing; the observer stays off.
        let seen = Atomic<Int>(0)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
        let token = try delegate.observe("transform", .before) { (_: UnsafeMutableRawPointer?, _: Int64) in seen.add(1, ordering: .relaxed) }
        token.cancel()
        token.cancel()
        #expect(token.isCancelled)
        _ = fx_plugin_transform(table, nil, 3, &called)
        #expect(seen.load(ordering: .relaxed) == 0)

        // Asking about or removing what is not there, or a method the table lacks: false, not an error.
        #expect(!delegate.responds(to: "flush"))
        #expect(!delegate.removeImplementation(for: "log"))
        #expect(!delegate.removeImplementation(for: "flush"))
    }

    @Test func mismatchedSlotThrowsAtCreationNamingPropertyAndSignatures() {
        let error = #expect(throws: DelegateError.self) { _ = try MisdeclaredStream() }
        #expect(error?.description.contains(
            "MisdeclaredStream.onClose (@Slot(\"close\")): method 'close' of cookie_io_functions_t has C signature "
                + "`int32_t (void *)`, but the closure has C signature `int64_t (void *)`") == true)
    }

    @Test func slotNamingNoMethodThrowsAtCreation() {
        let error = #expect(throws: DelegateError.self) { _ = try MisnamedStream() }
        #expect(error?.description.contains("MisnamedStream.onFlush (@Slot(\"flush\")): cookie_io_functions_t has no method named 'flush'") == true)
    }
}
