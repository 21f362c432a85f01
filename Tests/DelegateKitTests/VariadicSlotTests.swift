import DelegateKit
import DelegateKitCLibXML2
import DelegateKitFixtures
import Foundation
import Synchronization
import Testing

/// A table's variadic member, `void (*log)(void *context, const char *format, ...)`, implemented by
/// closures that read the rest of the arguments: by its stub, by its dispatcher (a `once` layer, a stack,
/// observers), by a stale pointer C copied before a replacement, and down to a wrapped table's original C
/// function; and libxml2's SAX handler, whose `error` member is one.
@Suite struct VariadicSlotTests {
    static let logger = try! ProtocolDescriptor(
        parsing: "struct logger { void (*log)(void *context, const char *format, ...); int (*level)(void *context); };",
        name: "logger")
    /// What `fx_log_many` passes, formatted: 8 integers, 10 doubles and a string, so that the last of
    /// each arrive on the stack.
    static let many = "1 2 3 4 5 6 7 8 1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0 9.0 10.0 end"
    static let kinds = "42 apples 1.50 1099511627776 x 4000000000 0x1234"

    private typealias LogThrough = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Void

    /// Calls the fixture's `name` (`void (hook, context)`) with `hook`, as a C library calls a hook it
    /// loaded from a table.
    private static func log(_ name: String, through hook: UnsafeRawPointer?, context: UnsafeMutableRawPointer? = nil) throws {
        unsafeBitCast(try fixture(name), to: LogThrough.self)(hook, context)
    }

    private static func slot(_ delegate: DynamicDelegate, _ method: String = "log") throws -> UnsafeRawPointer? {
        let offset = try #require(delegate.descriptor.method(named: method)).offset
        return (delegate.table + offset).load(as: UnsafeRawPointer?.self)
    }

    @Test func theMemberIsAVariadicMethod() throws {
        let log = try #require(Self.logger.method(named: "log"))
        #expect(log.signature == CSignature(.void, [.pointer, .pointer], isVariadic: true))
        #expect(log.signature.description == "void (void *, void *, ...)")
        #expect(Self.logger.fields.isEmpty)
    }

    @Test func anImplementationReadsTheArgumentsFromRegistersAndStack() throws {
        let delegate = DynamicDelegate(protocol: Self.logger)
        let lines = LogBox()
        try delegate.implement("log") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            lines.append(arguments.formatted(format!))
        }
        #expect(delegate.responds(to: "log"))
        try Self.log("fx_log_kinds", through: Self.slot(delegate))
        try Self.log("fx_log_many", through: Self.slot(delegate))
        #expect(lines.messages == [Self.kinds, Self.many])
    }

    /// A replacement retires the stub C copied; a call through the copy goes on to the new closure with
    /// every argument, the stack's too.
    @Test func aStalePointerForwardsEveryArgument() throws {
        let delegate = DynamicDelegate(protocol: Self.logger)
        let first = LogBox(), second = LogBox()
        try delegate.implement("log") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            first.append(arguments.formatted(format!))
        }
        let copied = try Self.slot(delegate)
        try delegate.implement("log") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            second.append(arguments.formatted(format!))
        }
        #expect(try Self.slot(delegate) != copied)
        try Self.log("fx_log_many", through: copied)
        try Self.log("fx_log_kinds", through: copied)
        #expect(first.messages.isEmpty)
        #expect(second.messages == [Self.many, Self.kinds])
    }

    /// Through the slot's dispatcher: observers see the arguments before `...`, a `once` layer serves one
    /// call and the layer below the next, each reading every argument.
    @Test func observersAndAStackRunThroughTheDispatcher() throws {
        let delegate = DynamicDelegate(protocol: Self.logger)
        let log = LogBox()
        try delegate.implement("log", key: "below") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            log.append("below: " + arguments.formatted(format!))
        }
        try delegate.implement("log", key: "once", once: true, variadic: { invocation, arguments in
            let format: UnsafePointer<CChar>? = invocation.argument(1)
            log.append("once: " + arguments.formatted(format!))
        })
        let before = try delegate.observe("log", .before) { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?) in
            log.append("observed \(String(cString: format!).prefix(5))")
        }
        try Self.log("fx_log_many", through: Self.slot(delegate))
        try Self.log("fx_log_many", through: Self.slot(delegate))
        #expect(log.messages == ["observed %d %d", "once: " + Self.many, "observed %d %d", "below: " + Self.many])
        withExtendedLifetime(before) {}
    }

    /// A wrapped table's variadic function stays at the bottom: observing the slot makes DelegateKit call
    /// it, passing on the arguments C passed.
    @Test func theWrappedOriginalGetsEveryArgument() throws {
        var original = (try fixture("fx_log_into"), UnsafeRawPointer?.none)
        let delegate = withUnsafeBytes(of: &original) { DynamicDelegate(protocol: Self.logger, wrapping: $0.baseAddress!) }
        #expect(try Self.slot(delegate) == original.0)
        let observed = LogBox()
        let token = try delegate.observe("log", .after) { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?) in
            observed.append(String(cString: format!))
        }
        #expect(try Self.slot(delegate) != original.0)
        var buffer = [UInt8](repeating: 0, count: 256)
        var written: String { String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self) }
        try buffer.withUnsafeMutableBytes { try Self.log("fx_log_many", through: Self.slot(delegate), context: $0.baseAddress) }
        #expect(written == Self.many)
        try buffer.withUnsafeMutableBytes { try Self.log("fx_log_kinds", through: Self.slot(delegate), context: $0.baseAddress) }
        #expect(written == Self.kinds)
        #expect(observed.messages.count == 2)
        token.cancel()
        #expect(try Self.slot(delegate) == original.0)
    }

    /// `long double`s after `...` (in whole q registers on aarch64, then on the stack) reach a slot's
    /// implementation through its stub, through a pointer copied before a replacement, through the
    /// dispatcher, and the wrapped original C function, which DelegateKit calls passing them on.
    @Test func longDoublesReachEveryImplementationAndTheOriginal() throws {
        let expected = VariadicClosureTests.longDoubleLines
        let delegate = DynamicDelegate(protocol: Self.logger)
        let first = LogBox(), second = LogBox()
        try delegate.implement("log") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            first.append(arguments.formatted(format!))
        }
        let copied = try Self.slot(delegate)
        try Self.log("fx_log_long_doubles", through: copied)
        #expect(first.messages == expected)
        try delegate.implement("log", key: "second") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            second.append(arguments.formatted(format!))
        }
        let observed = LogBox()
        let token = try delegate.observe("log", .before) { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) in
            observed.append("called")
        }
        try Self.log("fx_log_long_doubles", through: Self.slot(delegate))  // the dispatcher
        try Self.log("fx_log_long_doubles", through: copied)  // the first stub, retired, forwarding
        #expect(second.messages == expected + expected)
        #expect(observed.messages.count == 4)
        token.cancel()

        // The original formats into the buffer its context points to; an observer after it reads each call's text.
        var original = (try fixture("fx_log_into"), UnsafeRawPointer?.none)
        let wrapping = withUnsafeBytes(of: &original) { DynamicDelegate(protocol: Self.logger, wrapping: $0.baseAddress!) }
        let written = LogBox()
        let afterOriginal = try wrapping.observe("log", .after) { (context: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) in
            written.append(String(cString: context!.assumingMemoryBound(to: CChar.self)))
        }
        var buffer = [UInt8](repeating: 0, count: 256)
        try buffer.withUnsafeMutableBytes { try Self.log("fx_log_long_doubles", through: Self.slot(wrapping), context: $0.baseAddress) }
        #expect(written.messages == expected)
        withExtendedLifetime(afterOriginal) {}
    }

    /// A closure that reads only the fixed arguments through a `CInvocation` serves the slot too, and
    /// what the implementations captured goes with their removal.
    @Test func aDynamicImplementationAndItsRemoval() throws {
        let delegate = DynamicDelegate(protocol: Self.logger)
        let census = Census()
        let formats = LogBox()
        do {
            let member = census.member(7)
            try delegate.implement("log", dynamic: { invocation in
                let format: UnsafePointer<CChar>? = invocation.argument(1)
                formats.append("\(member.value) " + String(String(cString: format!).prefix(5)))
            })
        }
        try Self.log("fx_log_kinds", through: Self.slot(delegate))
        #expect(formats.messages == ["7 %d %s"])
        do {
            let member = census.member(8)
            try delegate.implement("log", key: "typed") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
                formats.append("\(member.value) " + arguments.formatted(format!))
            }
        }
        try Self.log("fx_log_many", through: Self.slot(delegate))
        #expect(formats.messages == ["7 %d %s", "8 " + Self.many])
        #expect(census.alive == 2)
        delegate.removeImplementation(for: "log")
        #expect(census.alive == 0)
        #expect(try Self.slot(delegate) == nil)
    }

    /// What a variadic method does not take, each refused with the method's signature.
    @Test func closuresThatCannotServeAreRefused() throws {
        let delegate = DynamicDelegate(protocol: Self.logger)
        let variadic = CSignature(.void, [.pointer, .pointer], isVariadic: true)
        #expect(throws: DelegateError.signatureMismatch(
            method: "log", protocol: "logger", expected: variadic, actual: CSignature(.void, [.pointer, .int32], isVariadic: true)
        )) {
            try delegate.implement("log") { (_: UnsafeMutableRawPointer?, _: Int32, _: CVariadicArguments) in }
        }
        // An override's `next` could not pass the arguments after `...` on.
        #expect(throws: DelegateError.signatureMismatch(
            method: "log", protocol: "logger", expected: variadic, actual: CSignature(.void, [.pointer, .pointer])
        )) {
            try delegate.override("log") { (next: Next<UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Void>, context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?) in
                next(context, format)
            }
        }
        // Nor can Swift call the slot: it has no way to pass them.
        #expect(throws: DelegateError.self) {
            _ = try delegate.implementation(for: "log", as: ((UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void).self)
        }
        // The variadic forms refuse a method that is not variadic.
        #expect(throws: DelegateError.signatureMismatch(
            method: "level", protocol: "logger", expected: CSignature(.int32, [.pointer]),
            actual: CSignature(.int32, [.pointer], isVariadic: true)
        )) {
            try delegate.implement("level") { (_: UnsafeMutableRawPointer?, _: CVariadicArguments) -> Int32 in 0 }
        }
        #expect(throws: DelegateError.self) { try delegate.implement("level", variadic: { _, _ in }) }
        #expect(!delegate.responds(to: "log") && !delegate.responds(to: "level"))
    }

    /// libxml2's SAX handler, read from its header: its `error` member is variadic. libxml2 copies the
    /// handler into its parser context, so the context made before a replacement calls the retired stub.
    @Test func libxml2sSAXHandlerReportsErrorsThroughItsVariadicMember() throws {
        let delegate = DynamicDelegate(protocol: try HeaderParsingTests.libxml2SAXHandler())
        // SAX2, without a structured error function: libxml2 then calls `error` with the message.
        try delegate.setField("initialized", UInt32(XML_SAX2_MAGIC))
        let first = Mutex(""), second = Mutex("")
        try delegate.implement("error") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            let text = arguments.formatted(format!)
            first.withLock { $0 += text }
        }
        let handler = delegate.table.assumingMemoryBound(to: xmlSAXHandler.self)
        func parse(_ context: xmlParserCtxtPtr) {
            let text = "<root><unclosed></root>"
            _ = xmlParseChunk(context, text, Int32(text.utf8.count), 1)
            xmlFreeParserCtxt(context)
        }
        parse(try #require(xmlCreatePushParserCtxt(handler, nil, nil, 0, nil)))
        #expect(first.withLock { $0 }.contains("Opening and ending tag mismatch: unclosed line 1 and root"), "\(first.withLock { $0 })")

        let copied = try #require(xmlCreatePushParserCtxt(handler, nil, nil, 0, nil))
        first.withLock { $0 = "" }
        try delegate.implement("error") { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            let text = arguments.formatted(format!)
            second.withLock { $0 += text }
        }
        parse(copied)
        #expect(first.withLock { $0 }.isEmpty)
        #expect(second.withLock { $0 }.contains("Opening and ending tag mismatch: unclosed line 1 and root"), "\(second.withLock { $0 })")
    }
}
