@testable import DelegateKit
import DelegateKitCLibXML2
import DelegateKitFixtures
import Foundation
import Synchronization
import Testing

/// Closures of variadic C function types, called by C the way logging and formatting hooks are: the
/// arguments after `...` read in order, handed on as a `va_list`, formatted; from registers and from the
/// stack; with fixed integer, float and double arguments; and libxml2's `xmlGenericErrorFunc`.
@Suite struct VariadicClosureTests {
    private typealias LogThrough = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Void

    /// Calls the fixture's `name` (`void (hook, context)`) with `closure` as the hook.
    private static func log(_ name: String, through closure: CClosure) throws {
        let through = unsafeBitCast(try fixture(name), to: LogThrough.self)
        withExtendedLifetime(closure) { through(closure.address, nil) }
    }

    @Test func aLoggerFormatsWhatCPassed() throws {
        let lines = Mutex<[String]>([])
        let logger = try CClosure { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            let line = arguments.formatted(format!)
            lines.withLock { $0.append(line) }
        }
        #expect(logger.signature == CSignature(.void, [.pointer, .pointer], isVariadic: true))
        try Self.log("fx_log_kinds", through: logger)
        try Self.log("fx_log_many", through: logger)
        #expect(lines.withLock { $0 } == [
            "42 apples 1.50 1099511627776 x 4000000000 0x1234",
            "1 2 3 4 5 6 7 8 1.0 2.0 3.0 4.0 5.0 6.0 7.0 8.0 9.0 10.0 end",
        ])
    }

    @Test func argumentsAreReadInOrderAsCPromotedThem() throws {
        struct Read: Equatable, Sendable {
            var int: Int32, text: String, double: Double, long: Int, character: Int32, unsigned: UInt32, pointer: UInt
        }
        let read = Mutex<Read?>(nil)
        let reader = try CClosure { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            let values = Read(
                int: arguments.next(), text: String(cString: arguments.next(UnsafePointer<CChar>.self)),
                double: arguments.next(), long: arguments.next(), character: arguments.next(), unsigned: arguments.next(),
                pointer: UInt(bitPattern: arguments.next(UnsafeRawPointer?.self)))
            // A va_list starts from the first argument again, whatever was read.
            let again = arguments.withVaList { vsnprintf(nil, 0, "%d", $0) }
            read.withLock { $0 = again == 2 ? values : nil }
        }
        try Self.log("fx_log_kinds", through: reader)
        #expect(read.withLock { $0 } == Read(
            int: 42, text: "apples", double: 1.5, long: 1 << 40, character: 120, unsigned: 4_000_000_000, pointer: 0x1234))
    }

    @Test func aVariadicClosureReturnsAValue() throws {
        let sum = try CClosure { (count: Int32, arguments: CVariadicArguments) -> Int in
            (0..<count).reduce(0) { total, _ in total + Int(arguments.next(Int32.self)) }
        }
        typealias SumThrough = @convention(c) (UnsafeRawPointer?) -> Int
        let through = unsafeBitCast(try fixture("fx_sum_through"), to: SumThrough.self)
        #expect(withExtendedLifetime(sum) { through(sum.address) } == 6 * 1000 + 55)
    }

    @Test func floatAndDoubleBeforeTheDots() throws {
        let weigh = try CClosure { (scale: Float, offset: Double, count: Int32, arguments: CVariadicArguments) -> Double in
            Double(scale) * (0..<count).reduce(0) { total, _ in total + arguments.next(Double.self) } + offset
        }
        typealias MixedThrough = @convention(c) (UnsafeRawPointer?) -> Double
        let through = unsafeBitCast(try fixture("fx_mixed_through"), to: MixedThrough.self)
        #expect(withExtendedLifetime(weigh) { through(weigh.address) } == 12.5)
    }

    @Test func aRunTimeSignatureReadsThroughAnInvocation() throws {
        let sum = try CClosure(variadic: CSignature(.int64, [.int32])) { invocation, arguments in
            let count: Int32 = invocation.argument(0)
            invocation.setReturnValue((0..<count).reduce(Int64(0)) { total, _ in total + Int64(arguments.next(Int32.self)) })
        }
        #expect(sum.signature == CSignature(.int64, [.int32], isVariadic: true))
        typealias SumThrough = @convention(c) (UnsafeRawPointer?) -> Int
        let through = unsafeBitCast(try fixture("fx_sum_through"), to: SumThrough.self)
        #expect(withExtendedLifetime(sum) { through(sum.address) } == 6055)
    }

    /// What `fx_log_long_doubles` passes in its two calls, formatted by C's own `snprintf`: `long double`s
    /// among integers, doubles and strings, in vector registers and past the eighth.
    static let longDoubleLines: [String] = (0..<2).map { call in
        var buffer = [CChar](repeating: 0, count: 256)
        _ = fx_format_long_doubles(Int32(call), &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }

    /// `%Lf` and `%La` of a printf-like closure read each `long double` whole: on aarch64 it arrives in a
    /// whole q register while one is free, then on the stack; on x86_64 always on the stack. Read by a
    /// typed closure, by one that sees the fixed arguments through a `CInvocation`, and by one that hands
    /// the `va_list` to C's `vsnprintf` itself.
    @Test func longDoublesAfterTheDotsArriveWhole() throws {
        #if arch(arm64)
        #expect(Self.longDoubleLines[0] == "2.500000 7 0x1.5555555555555555555555555555p-2 mid 1.5 -0.250000")
        #elseif arch(x86_64)
        #expect(Self.longDoubleLines[0] == "2.500000 7 0xa.aaaaaaaaaaaaaabp-5 mid 1.5 -0.250000")
        #endif
        let typed = LogBox(), dynamic = LogBox(), handedOn = LogBox()
        let typedClosure = try CClosure { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            typed.append(arguments.formatted(format!))
        }
        let dynamicClosure = try CClosure(variadic: CSignature(.void, [.pointer, .pointer])) { invocation, arguments in
            let format: UnsafePointer<CChar>? = invocation.argument(1)
            dynamic.append(arguments.formatted(format!))
        }
        let handingOn = try CClosure { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            var buffer = [CChar](repeating: 0, count: 256)
            _ = arguments.withVaList { vsnprintf(&buffer, buffer.count, format, $0) }
            handedOn.append(String(decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self))
        }
        for (closure, box) in [(typedClosure, typed), (dynamicClosure, dynamic), (handingOn, handedOn)] {
            try Self.log("fx_log_long_doubles", through: closure)
            #expect(box.messages == Self.longDoubleLines)
        }
    }

    /// libxml2's generic error function, `void (*)(void *ctx, const char *msg, ...)`: a malformed document's
    /// errors arrive formatted.
    @Test func libxml2sGenericErrorFunctionHearsAParseError() throws {
        let messages = Mutex<String>("")
        let handler = try CClosure { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
            let text = arguments.formatted(format!)
            messages.withLock { $0 += text }
        }
        // The generic error function is the calling thread's.
        xmlSetGenericErrorFunc(nil, OpaquePointer(handler.address))   // Swift imports `...` types as OpaquePointer
        defer { xmlSetGenericErrorFunc(nil, nil) }
        let text = "<root><unclosed></root>"
        let document = withExtendedLifetime(handler) { xmlReadMemory(text, Int32(text.utf8.count), "broken.xml", nil, 0) }
        xmlFreeDoc(document)
        let heard = messages.withLock { $0 }
        #expect(heard.contains("broken.xml:1: parser error : Opening and ending tag mismatch: unclosed line 1 and root"), "\(heard)")
    }

    /// A parsed variadic signature makes a closure that reads the arguments before `...` only.
    @Test func aParsedVariadicSignatureReadsItsFixedArguments() throws {
        let formats = LogBox()
        let signature = try CSignature(parsing: "typedef void (*fx_log_hook)(void *context, const char *format, ...);")
        let hook = try CClosure(signature: signature) { invocation in
            let format: UnsafePointer<CChar>? = invocation.argument(1)
            formats.append(String(String(cString: format!).prefix(2)))
        }
        #expect(hook.signature == signature && signature.isVariadic)
        try Self.log("fx_log_kinds", through: hook)
        try Self.log("fx_log_many", through: hook)
        #expect(formats.messages == ["%d", "%d"])
    }

    @Test func signaturesAVariadicClosureCannotTakeAreRefused() {
        #expect(throws: DelegateError.self) { try CClosure(variadic: CSignature(.void, [.structure([.int64, .int64])])) { _, _ in } }
        #expect(throws: DelegateError.self) { try CClosure(variadic: CSignature(.structure([.double, .double, .double]), [.int32])) { _, _ in } }
        let tooMany = CSignature(.void, Array(repeating: .int64, count: LibffiShim.variadicRegisters.integers + 1))
        #expect(throws: DelegateError.self) { try CClosure(variadic: tooMany) { _, _ in } }
        #expect(throws: DelegateError.self) { try CClosure(variadic: CSignature(.void, [.longDouble])) { _, _ in } }
    }

    @Test func itsPointerHasNoSwiftFunctionType() throws {
        let logger = try CClosure { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?, _: CVariadicArguments) in }
        typealias Fixed = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CClosure.functionPointer(as:)", signature: logger.signature, requested: String(reflecting: Fixed.self),
            reason: "the closure is variadic and Swift has no function type with `...` (it imports one as OpaquePointer): pass OpaquePointer(address)")
        ) { try logger.functionPointer(as: Fixed.self) }
    }

    @Test func readingAPromotedTypeNarrowStopsNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let reader = try CClosure { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
                _ = arguments.next(Float.self)
            }
            try VariadicClosureTests.log("fx_log_kinds", through: reader)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("C passes `float` after `...` as a double: read Double, not Float (CVariadicArguments.next)"), "\(stderr)")
    }
}
