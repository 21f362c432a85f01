import DelegateKit
import DelegateKitFixtures
import Foundation
import Testing

/// A struct whose stated C type is wrong: C's struct {uint8_t; float;} is 8 bytes, this is 16.
struct MisdescribedPair { var tag: UInt8; var value: Double }
extension MisdescribedPair: CValue { static var cType: CType { .structure([.uint8, .float]) } }

/// A struct that holds a reference, so its bytes mean nothing to C.
struct Named { var name: String }
extension Named: CValue { static var cType: CType { .structure([.pointer, .pointer]) } }

/// Every error DelegateKit reports, with the exact message a user sees.
@Suite struct ErrorTests {
    @Test func mismatchedClosureNamesTheMethodAndBothSignatures() throws {
        let delegate = DynamicDelegate(protocol: cookieIO)
        let error = #expect(throws: DelegateError.self) {
            try delegate.implement("close") { (_: UnsafeMutableRawPointer?) -> UInt32 in 0 }
        }
        #expect(error == .signatureMismatch(
            method: "close", protocol: "cookie_io_functions_t",
            expected: CSignature(.int32, [.pointer]), actual: CSignature(.uint32, [.pointer])))
        #expect(error?.description == "method 'close' of cookie_io_functions_t has C signature `int32_t (void *)`, "
            + "but the closure has C signature `uint32_t (void *)`")
    }

    @Test func compatibilityRules() throws {
        let delegate = DynamicDelegate(protocol: cookieIO)
        // Pointers are interchangeable, whatever they point to and whether or not they are optional.
        try delegate.implement("read") { (_: OpaquePointer?, _: UnsafeMutableRawPointer, n: Int) -> Int in n }
        // size_t accepts Int (as Swift imports it) and UInt; ssize_t is Int.
        try delegate.implement("read") { (_: UnsafeMutableRawPointer?, _: UnsafeMutablePointer<CChar>?, n: UInt) -> Int in Int(n) }
        // uint64_t is not size_t: it accepts only UInt64/UInt.
        let exact = ProtocolDescriptor(name: "t", methods: [MethodDescriptor(name: "f", signature: CSignature(.uint64, [.uint64]))])
        let strict = DynamicDelegate(protocol: exact)
        #expect(throws: DelegateError.self) { try strict.implement("f") { (n: Int) -> UInt64 in UInt64(n) } }
        try strict.implement("f") { (n: UInt) -> UInt64 in UInt64(n) }
        // int and unsigned are distinct; char is int8_t; bool is not uint8_t.
        #expect(try CSignature(parsing: "char (unsigned, int)") == CSignature(.int8, [.uint32, .int32]))
        #expect(!CType.bool.accepts(.uint8))
        #expect(!CType.int32.accepts(.uint32))
        // Arity counts.
        #expect(throws: DelegateError.self) {
            try delegate.implement("close") { (_: UnsafeMutableRawPointer?, _: Int32) -> Int32 in 0 }
        }
    }

    @Test func failedImplementChangesNothing() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
        let before = delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.transform
        #expect(throws: DelegateError.self) {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int32) -> Int64 in Int64(value) }
        }
        #expect(throws: DelegateError.self) {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: MisdescribedPair) -> Int64 in 0 }
        }
        let after = delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.transform
        #expect(unsafeBitCast(before, to: UnsafeRawPointer?.self) == unsafeBitCast(after, to: UnsafeRawPointer?.self))
        #expect(after?(nil, 1) == 2)
    }

    @Test func unknownMethodAndField() throws {
        let delegate = DynamicDelegate(protocol: cookieIO)
        #expect(throws: DelegateError.unknownMethod("flush", protocol: "cookie_io_functions_t")) {
            try delegate.implement("flush") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        }
        #expect(DelegateError.unknownMethod("flush", protocol: "cookie_io_functions_t").description
            == "cookie_io_functions_t has no method named 'flush'")
        #expect(!delegate.responds(to: "flush"))
        #expect(!delegate.removeImplementation(for: "flush"))
        #expect(throws: DelegateError.unknownField("iVersion", protocol: "cookie_io_functions_t")) {
            try delegate.setField("iVersion", Int32(1))
        }
        #expect(DelegateError.unknownField("iVersion", protocol: "cookie_io_functions_t").description
            == "cookie_io_functions_t has no data member named 'iVersion'")
    }

    @Test func fieldTypeMismatch() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        let error = #expect(throws: DelegateError.self) { try delegate.setField("version", Int64(3)) }
        #expect(error == .fieldTypeMismatch(field: "version", protocol: "fx_plugin", expected: .int32, actual: .int64))
        #expect(error?.description == "data member 'version' of fx_plugin has C type `int32_t`, but the value has C type `int64_t`")
        #expect(throws: DelegateError.self) { _ = try delegate.field("version", as: UInt32.self) }
    }

    @Test func badStructLayoutAndNonTrivialTypes() throws {
        let error = #expect(throws: DelegateError.self) {
            _ = try CClosure { (pair: MisdescribedPair) -> Int32 in 0 }
        }
        #expect(error?.description == "DelegateKitTests.MisdescribedPair states C type `struct { uint8_t; float; }` "
            + "(size 8, alignment 4), but its Swift layout has size 16, alignment 8")
        let reference = #expect(throws: DelegateError.self) { _ = try CClosure { (_: Named) in } }
        #expect(reference == .notTrivial(type: "DelegateKitTests.Named"))
        #expect(reference?.description
            == "DelegateKitTests.Named holds references or other non-trivial values, so it cannot travel through C by value")
    }

    @Test func duplicateNamesAndInvalidMembers() throws {
        let twice = ProtocolDescriptor(name: "twice", methods: [
            MethodDescriptor(name: "run", signature: CSignature(.void, [])),
            MethodDescriptor(name: "run", signature: CSignature(.int32, [])),
        ])
        #expect(throws: DelegateError.duplicateMember("run", protocol: "twice")) { try twice.validate() }
        let delegate = DynamicDelegate(protocol: twice)
        #expect(throws: DelegateError.duplicateMember("run", protocol: "twice")) { try delegate.implement("run") {} }
        #expect(throws: DelegateError.duplicateMember("run", protocol: "twice")) { try delegate.validate() }
        #expect(DelegateError.duplicateMember("run", protocol: "twice").description
            == "twice declares more than one member named 'run'")

        let fieldAndMethod = ProtocolDescriptor(name: "m", members: [
            .field("x", .int32), .method(MethodDescriptor(name: "x", signature: CSignature(.void, []))),
        ])
        #expect(throws: DelegateError.duplicateMember("x", protocol: "m")) { try fieldAndMethod.validate() }

        let voidField = ProtocolDescriptor(name: "v", members: [.field("nothing", .void)])
        let error = #expect(throws: DelegateError.self) { try voidField.validate() }
        #expect(error?.description == "member 'nothing' of v cannot be used: its type is void, which only a return type may be")
    }

    @Test func signaturesLibffiCannotServe() throws {
        let voidArgument = #expect(throws: DelegateError.self) {
            _ = try CClosure(signature: CSignature(.int32, [.int32, .void])) { _ in }
        }
        #expect(voidArgument?.description
            == "C signature `int32_t (int32_t, void)` cannot be used: argument 2 is void, which only a return type may be")
        let emptyStruct = #expect(throws: DelegateError.self) {
            _ = try CClosure(signature: CSignature(.structure([]), [])) { _ in }
        }
        #expect(emptyStruct?.description
            == "C signature `struct { } (void)` cannot be used: the return type is a struct with no members, which C does not allow")
    }

    @Test func missingRequiredMethods() throws {
        let delegate = DynamicDelegate(protocol: cookieIO)
        let error = #expect(throws: DelegateError.self) { try delegate.validate() }
        #expect(error?.description == "cookie_io_functions_t requires method 'close', which has no implementation")
        try delegate.implement("close") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        try delegate.validate()
    }

    @Test func unparsableSignatureGivesLineAndColumn() throws {
        let error = #expect(throws: DelegateError.self) { _ = try CSignature(parsing: "int (void *, )") }
        #expect(error == .syntax(message: "expected a type, found ')'", text: "int (void *, )", line: 1, column: 14))
        #expect(error?.description == """
            C syntax error at line 1, column 14: expected a type, found ')'
                int (void *, )
                             ^
            """)
    }
}

/// A `@Slot` whose closure type does not fit its method; creating one must stop with a clear message.
final class MisdeclaredStream: BlockDelegate {
    @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int64)?
    init() { super.init(protocol: cookieIO) }
}

/// A `@Slot` that names no method of the protocol.
final class MisnamedStream: BlockDelegate {
    @Slot("flush") var onFlush: ((UnsafeMutableRawPointer?) -> Int32)?
    init() { super.init(protocol: cookieIO) }
}

@Suite struct SlotDeclarationTests {
    @Test func mismatchedSlotStopsAtCreationNamingPropertyAndSignatures() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MisdeclaredStream()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains(
            "MisdeclaredStream.onClose (@Slot(\"close\")): method 'close' of cookie_io_functions_t has C signature "
                + "`int32_t (void *)`, but the closure has C signature `int64_t (void *)`"))
    }

    @Test func slotNamingNoMethodStopsAtCreation() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MisnamedStream()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("MisnamedStream.onFlush (@Slot(\"flush\")): cookie_io_functions_t has no method named 'flush'"))
    }
}
