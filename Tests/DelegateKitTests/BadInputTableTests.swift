import DelegateKit
import DelegateKitFixtures
import Synchronization
import Testing

/// A Swift type that states a C layout it does not have.
struct MisstatedPair { var tag: UInt8; var value: Double }
extension MisstatedPair: CValue { static var cType: CType { .structure([.uint8, .float]) } }

/// A type that holds a reference, so its bytes cannot travel through C.
struct Referencing { var name: String }
extension Referencing: CValue { static var cType: CType { .structure([.pointer, .pointer]) } }

/// A Swift struct posing as a C table, with a Swift closure member C could neither call nor copy.
struct ClosureTable {
    var apply: (@convention(c) (Int32) -> Int32)?
    var run: ((Int32) -> Int32)?
}

/// One misuse the API detects, and the exact error it produces.
struct Misuse: Sendable, CustomTestStringConvertible {
    let name: String
    let action: @Sendable () throws -> Void
    let expected: DelegateError
    var testDescription: String { name }
}

typealias Transform = (UnsafeMutableRawPointer?, Int64) -> Int64
let transformSignature = CSignature(.int64, [.pointer, .int64])
let twoA = ProtocolDescriptor(name: "t", methods: [
    MethodDescriptor(name: "a", signature: CSignature(.void, [])), MethodDescriptor(name: "a", signature: CSignature(.void, [])),
])

/// Why `fx_geometry.area` cannot be implemented: the tests never make `fx_extent` a ``CValue``.
let extentRefusal = "its type `@convention(c) (__C.fx_extent) -> Swift.Int64` takes the struct fx_extent by value, "
    + "and fx_extent does not conform to CValue; state its C layout "
    + "(`extension fx_extent: CValue { static var cType: CType { .structure([…]) } }`) to implement it"

/// Every misuse the API can detect that is reported as an error, with the error. The misuses that stop
/// the process instead (a `@Slot` that does not fit its table, with the non-throwing initializers; a
/// `functionPointer(as:)` type that does not fit) are in ErrorTests, TypedDelegateTests and
/// FunctionPointerTypeTests; the README links this table.
let misuses: [Misuse] = [
    Misuse(name: "unknown method", action: {
        try DynamicDelegate(protocol: pluginProtocol).implement("flush") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
    }, expected: .unknownMethod("flush", protocol: "fx_plugin")),
    Misuse(name: "misspelt method name", action: {
        try DynamicDelegate(protocol: pluginProtocol).implement("transfrom") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
    }, expected: .unknownMethod("transfrom", protocol: "fx_plugin", suggestions: ["transform"])),
    Misuse(name: "method name in another case", action: {
        try DynamicDelegate(protocol: pluginProtocol).implement("Log") { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) in }
    }, expected: .unknownMethod("Log", protocol: "fx_plugin", suggestions: ["log"])),
    Misuse(name: "a data member given a closure", action: {
        try DynamicDelegate(protocol: pluginProtocol).implement("version") { () -> Int32 in 0 }
    }, expected: .notAMethod("version", protocol: "fx_plugin", type: .int32)),
    Misuse(name: "closure with another C signature (implement)", action: {
        try DynamicDelegate(protocol: pluginProtocol).implement("transform") { (_: UnsafeMutableRawPointer?, x: Int32) -> Int64 in Int64(x) }
    }, expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
                                    actual: CSignature(.int64, [.pointer, .int32]))),
    Misuse(name: "closure with another C signature (override)", action: {
        try DynamicDelegate(protocol: pluginProtocol).override("transform") {
            (next: Next<UnsafeMutableRawPointer?, Int64, Double>, context: UnsafeMutableRawPointer?, x: Int64) -> Double in next(context, x)
        }
    }, expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
                                    actual: CSignature(.double, [.pointer, .int64]))),
    Misuse(name: "observer with other argument types", action: {
        _ = try DynamicDelegate(protocol: pluginProtocol).observe("transform", .before) { (_: UnsafeMutableRawPointer?, _: Double) in }
    }, expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
                                    actual: CSignature(.int64, [.pointer, .double]))),
    Misuse(name: "current implementation asked for as another type", action: {
        _ = try DynamicDelegate(protocol: pluginProtocol).implementation(for: "transform", as: ((Int64) -> Int64).self)
    }, expected: .signatureMismatch(method: "transform", protocol: "fx_plugin", expected: transformSignature,
                                    actual: CSignature(.int64, [.int64]))),
    Misuse(name: "typed table: closure of another Swift type", action: {
        try TypedDelegate(for: fx_plugin.self).implement(\.transform) { (_: UnsafeRawPointer?, x: Int64) -> Int64 in x }
    }, expected: .typeMismatch(member: "transform", protocol: "fx_plugin",
                               expected: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.Int64",
                               actual: "@convention(c) (Swift.Optional<Swift.UnsafeRawPointer>, Swift.Int64) -> Swift.Int64")),
    Misuse(name: "typed table: key path to a data member", action: {
        try TypedDelegate(for: fx_plugin.self).implement(\.version) { () -> Int32 in 0 }
    }, expected: .invalidMember("version", protocol: "fx_plugin", reason: "it is a data member, not a function pointer; set it through the typed table")),
    Misuse(name: "typed table: a Swift closure member", action: {
        try TypedDelegate(for: ClosureTable.self).implement(\.apply) { (x: Int32) -> Int32 in x }
    }, expected: .invalidMember("run", protocol: "ClosureTable", reason: "its type `Swift.Optional<(Swift.Int32) -> Swift.Int32>` "
                                    + "is a Swift closure, not a C function pointer; declare it `@convention(c)` for C to call it")),
    Misuse(name: "typed table: a struct by value that is not a CValue (key path)", action: {
        _ = try TypedDelegate(for: fx_geometry.self).methodName(of: \.area)
    }, expected: .invalidMember("area", protocol: "fx_geometry", reason: extentRefusal)),
    Misuse(name: "typed table: a struct by value that is not a CValue (by name)", action: {
        try TypedDelegate(for: fx_geometry.self).implement("area") { (x: Int64) -> Int64 in x }
    }, expected: .invalidMember("area", protocol: "fx_geometry", reason: extentRefusal)),
    Misuse(name: "function pointer asked for as another C function type", action: {
        _ = try CClosure { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
            .checkedFunctionPointer(as: (@convention(c) (UnsafeMutableRawPointer?, Int32) -> Int64).self)
    }, expected: .functionTypeMismatch(call: "CClosure.checkedFunctionPointer(as:)", signature: transformSignature,
                                       requested: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int32) -> Swift.Int64",
                                       reason: "its parameter 2 is `Swift.Int32` (C type `int32_t`), but the closure's is `int64_t`")),
    Misuse(name: "function pointer asked for as a type that is no C function", action: {
        _ = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }.checkedFunctionPointer(as: OpaquePointer.self)
    }, expected: .functionTypeMismatch(call: "CCallback.checkedFunctionPointer(as:)", signature: transformSignature,
                                       requested: "Swift.OpaquePointer",
                                       reason: "it is not a @convention(c) function type (pass `address` where C takes a `void *`)")),
    Misuse(name: "block delegate's typed table asked for as another struct", action: {
        _ = try TypedPlugin().typedTable(as: fx_point.self)
    }, expected: .tableTypeMismatch(call: "TypedPlugin.typedTable(as:)", requested: "fx_point", actual: "fx_plugin")),
    Misuse(name: "@Slot that does not fit, with the throwing initializer", action: { _ = try ReportingMisdeclaredStream() },
           expected: .slotMismatch(property: "ReportingMisdeclaredStream.onClose", slot: "\"close\"",
                                   error: .signatureMismatch(method: "close", protocol: "cookie_io_functions_t",
                                                             expected: CSignature(.int32, [.pointer]), actual: CSignature(.int64, [.pointer])))),
    Misuse(name: "two members with one name", action: { try twoA.validate() },
           expected: .duplicateMember("a", protocol: "t")),
    Misuse(name: "implementing in a descriptor with two members of one name", action: {
        try DynamicDelegate(protocol: twoA).implement("a") { () in }
    }, expected: .duplicateMember("a", protocol: "t")),
    Misuse(name: "a void data member", action: {
        try ProtocolDescriptor(name: "t", members: [.field("x", .void)]).validate()
    }, expected: .invalidMember("x", protocol: "t", reason: "its type is void, which only a return type may be")),
    Misuse(name: "a stated C layout Swift does not have", action: {
        _ = try CClosure { (p: MisstatedPair) -> Int32 in Int32(p.tag) }
    }, expected: .layoutMismatch(type: "DelegateKitTests.MisstatedPair", cType: .structure([.uint8, .float]), swiftSize: 16, swiftAlignment: 8)),
    Misuse(name: "a type holding references by value", action: {
        _ = try CClosure { (r: Referencing) -> Int32 in Int32(r.name.count) }
    }, expected: .notTrivial(type: "DelegateKitTests.Referencing")),
    Misuse(name: "data member set with another C type", action: {
        try DynamicDelegate(protocol: pluginProtocol).setField("version", Int64(1))
    }, expected: .fieldTypeMismatch(field: "version", protocol: "fx_plugin", expected: .int32, actual: .int64)),
    Misuse(name: "unknown data member", action: {
        try DynamicDelegate(protocol: pluginProtocol).setField("flags", Int32(1))
    }, expected: .unknownField("flags", protocol: "fx_plugin")),
    Misuse(name: "misspelt data member", action: {
        try DynamicDelegate(protocol: pluginProtocol).setField("verison", Int32(1))
    }, expected: .unknownField("verison", protocol: "fx_plugin", suggestions: ["version"])),
    Misuse(name: "a method set as a data member", action: {
        try DynamicDelegate(protocol: pluginProtocol).setField("transform", Int64(1))
    }, expected: .notAField("transform", protocol: "fx_plugin", signature: transformSignature)),
    Misuse(name: "a method read as a data member", action: {
        _ = try DynamicDelegate(protocol: pluginProtocol).field("transform", as: Int64.self)
    }, expected: .notAField("transform", protocol: "fx_plugin", signature: transformSignature)),
    Misuse(name: "forwarding loop", action: {
        let a = DynamicDelegate(protocol: pluginProtocol), b = DynamicDelegate(protocol: pluginProtocol)
        try a.setForwardingTarget(.delegate(b))
        try b.setForwardingTarget(.delegate(a))
    }, expected: .forwardingLoop(["fx_plugin", "fx_plugin", "fx_plugin"])),
    Misuse(name: "required method without implementation", action: {
        try DynamicDelegate(protocol: pluginProtocol).validate()
    }, expected: .missingRequiredMethods(["start"], protocol: "fx_plugin")),
    Misuse(name: "unparsable signature", action: { _ = try CSignature(parsing: "int (void *") },
           expected: .syntax(message: "expected ')' or ',' after a parameter, found the end of the text", text: "int (void *", line: 1, column: 12)),
    Misuse(name: "unknown type by value", action: { _ = try CSignature(parsing: "int (sqlite3_int64)") },
           expected: .syntax(message: "the layout of 'sqlite3_int64' is unknown, so it can only be used behind a pointer ('sqlite3_int64 *')",
                             text: "int (sqlite3_int64)", line: 1, column: 6)),
    Misuse(name: "variadic signature", action: { _ = try CSignature(parsing: "int (const char *, ...)") },
           expected: .syntax(message: "a variadic function cannot be implemented by a closure: libffi has no variadic closures",
                             text: "int (const char *, ...)", line: 1, column: 20)),
    Misuse(name: "bit-field", action: { _ = try ProtocolDescriptor(parsing: "struct s { int a : 3; };", name: "s") },
           expected: .syntax(message: "bit-fields are not supported: their layout is the compiler's choice",
                             text: "struct s { int a : 3; };", line: 1, column: 18)),
    Misuse(name: "union by value", action: { _ = try ProtocolDescriptor(parsing: "struct s { union { int a; float b; } u; };", name: "s") },
           expected: .syntax(message: "unions are not supported: DelegateKit cannot lay out or pass a union by value",
                             text: "struct s { union { int a; float b; } u; };", line: 1, column: 12)),
    Misuse(name: "struct the text does not define", action: { _ = try ProtocolDescriptor(parsing: "struct s { int a; };", name: "t") },
           expected: .syntax(message: "the text defines no struct named 't'", text: "struct s { int a; };", line: 1, column: 21)),
    Misuse(name: "a library that does not exist", action: { _ = try CLibrary(path: "libdelegatekit-nope.so") },
           expected: .libraryNotFound(
               path: "libdelegatekit-nope.so", reason: "libdelegatekit-nope.so: cannot open shared object file: No such file or directory")),
    Misuse(name: "unknown symbol", action: {
        _ = try CFunction("sqlite3_opne", declaration: "int (void)", in: CLibrary(path: "libsqlite3.so.0"))
    }, expected: .symbolNotFound(
        "sqlite3_opne", library: "'libsqlite3.so.0'", reason: "/lib/x86_64-linux-gnu/libsqlite3.so.0: undefined symbol: sqlite3_opne")),
    Misuse(name: "a call with too few arguments", action: {
        let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
        let _: Int32 = try snprintf.call(Int32(1))
    }, expected: .callMismatch(
        function: "'snprintf'", declaration: "int32_t (void *, size_t, void *, ...)", call: CSignature(.int32, [.int32]),
        reason: "it takes at least 3 arguments, the call passes 1")),
    Misuse(name: "a call with too many arguments", action: {
        let labs = try CFunction("labs", declaration: "long labs(long)")
        let _: Int = try labs.call(-3, 4)
    }, expected: .callMismatch(
        function: "'labs'", declaration: "int64_t (int64_t)", call: CSignature(.int64, [.int64, .int64]),
        reason: "it takes 1 argument, the call passes 2")),
    Misuse(name: "a call with an argument of another type", action: {
        let labs = try CFunction("labs", declaration: "long labs(long)")
        let _: Int = try labs.call(Int32(-3))
    }, expected: .callMismatch(
        function: "'labs'", declaration: "int64_t (int64_t)", call: CSignature(.int64, [.int32]),
        reason: "argument 1 is `int32_t`, where the function takes `int64_t`")),
    Misuse(name: "a call asking for another result type", action: {
        let labs = try CFunction("labs", declaration: "long labs(long)")
        let _: Double = try labs.call(-3)
    }, expected: .callMismatch(
        function: "'labs'", declaration: "int64_t (int64_t)", call: CSignature(.double, [.int64]),
        reason: "the result is asked for as `double`, but the function returns `int64_t`")),
    Misuse(name: "a run-time value its type cannot hold", action: {
        _ = try CFunction("abs", declaration: "int abs(int)").call([.signed(1 << 40)])
    }, expected: .valueMismatch(function: "'abs'", argument: 1, type: .int32, value: .signed(1 << 40))),
    Misuse(name: "a variadic argument C cannot take", action: {
        _ = try CFunction(address: fixture("fx_sum_variadic"), declaration: "double (const char *, ...)", name: "fx_sum_variadic")
            .call([.pointer(0), .floatingPoint(0.5)], variadicTypes: [.float])
    }, expected: .variadicArgument(
        function: "'fx_sum_variadic'", argument: 2, type: .float, reason: "C passes it as `double`; state that type")),
    Misuse(name: "variadic arguments to a function that takes none", action: {
        _ = try CFunction("abs", declaration: "int abs(int)").call([.signed(1), .signed(2)], variadicTypes: [.int32])
    }, expected: .callMismatch(
        function: "'abs'", declaration: "int32_t (int32_t)", call: CSignature(.int32, [.int32, .int32]),
        reason: "it takes 1, the call passes 2 (1 variadic)")),
]

@Suite struct BadInputTableTests {
    @Test(arguments: misuses)
    func misuseGivesItsExactError(_ misuse: Misuse) {
        #expect(throws: misuse.expected, "\(misuse.name)") { try misuse.action() }
    }

    @Test func aSyntaxErrorWithALineOutsideItsTextStillDescribesItself() {
        // Found while writing this table: a line number of 0 made `description` index out of range.
        #expect(DelegateError.syntax(message: "m", text: "x", line: 0, column: 0).description.hasPrefix("C syntax error at line 0"))
        #expect(DelegateError.syntax(message: "m", text: "x", line: 9, column: 1).description.hasPrefix("C syntax error at line 9"))
    }

    @Test func everyErrorNamesWhatWasAskedFor() {
        for misuse in misuses {
            let text = misuse.expected.description
            #expect(!text.isEmpty && !text.contains("DelegateError"), "\(misuse.name): \(text)")
        }
    }

    /// Misuses with defined, non-error outcomes: they are safe, and these say what they do.
    @Test func misusesWithDefinedOutcomes() throws {
        // A one-shot callback called twice: the second call gets the default value; the body ran once.
        let ran = Atomic<Int>(0)
        let once = try CCallback.oneShot { (x: Int64) -> Int64 in
            ran.add(1, ordering: .relaxed)
            return x + 1
        }
        let function: @convention(c) (Int64) -> Int64 = once.functionPointer()
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

        // Removing what is not there, or from a method the table lacks: false, not an error.
        #expect(!delegate.removeImplementation(for: "log"))
        #expect(!delegate.removeImplementation(for: "flush"))
    }
}
