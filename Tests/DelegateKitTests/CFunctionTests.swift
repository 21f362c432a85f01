@testable import DelegateKit  // CFunction.checkedCalls: which checks a function remembers
import DelegateKitFixtures
import Foundation
import Glibc
import Synchronization
import Testing

/// Calling C from Swift through `CFunction`: glibc's variadic functions, the fixture's functions of every
/// shape, and run-time values. Each result is compared with what C itself computes.
@Suite struct CFunctionTests {
    /// The fixture's reference function `T fx_ref_<name>(T, T)`.
    func reference<T: CValue>(_ name: String, _ type: T.Type) throws -> CFunction {
        try CFunction(address: fixture("fx_ref_\(name)"), signature: CSignature(T.cType, [T.cType, T.cType]), name: "fx_ref_\(name)")
    }

    /// Calls `fx_ref_<name>(a, b)` typed and with run-time values (the register path where it exists) and
    /// checks both against the direct Swift call of the same C function.
    func agree<T: CValue & Equatable>(
        _ name: String, _ a: T, _ b: T, direct: (T, T) -> T, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        let function = try reference(name, T.self)
        let expected = direct(a, b)
        let typed: T = try function.call(a, b)
        #expect(typed == expected, sourceLocation: sourceLocation)
        let dynamic = try function.call([value(a), value(b)])
        #expect(dynamic == value(expected), sourceLocation: sourceLocation)
    }

    func value<T: CValue>(_ value: T) -> CDynamicValue {
        withUnsafeBytes(of: value) { bytes in
            switch T.cType {
            case .bool: return .bool(bytes.load(as: Bool.self))
            case .int8: return .signed(Int64(bytes.load(as: Int8.self)))
            case .int16: return .signed(Int64(bytes.load(as: Int16.self)))
            case .int32: return .signed(Int64(bytes.load(as: Int32.self)))
            case .int64: return .signed(bytes.load(as: Int64.self))
            case .uint8: return .unsigned(UInt64(bytes.load(as: UInt8.self)))
            case .uint16: return .unsigned(UInt64(bytes.load(as: UInt16.self)))
            case .uint32: return .unsigned(UInt64(bytes.load(as: UInt32.self)))
            case .uint64, .size: return .unsigned(bytes.load(as: UInt64.self))
            case .float: return .floatingPoint(Double(bytes.load(as: Float.self)))
            case .double: return .floatingPoint(bytes.load(as: Double.self))
            case .pointer: return .pointer(bytes.load(as: UInt.self))
            default: return .bytes(Array(bytes.prefix(T.cType.size)))
            }
        }
    }

    @Test func everyScalarAgreesWithTheDirectCall() throws {
        struct Agreeing: ScalarCaseVisitor {
            let tests: CFunctionTests
            func visit<T: CValue & Equatable>(_ name: String, _ a: T, _ b: T, direct: (T, T) -> T) throws {
                try tests.agree(name, a, b, direct: direct)
            }
        }
        try visitEveryScalarCase(Agreeing(tests: self))
    }

    /// A Swift type stating a scalar C type travels where C puts that scalar, whatever register Swift
    /// would use for it: such calls take libffi's way, with the fixed-arity and the pack-based forms.
    @Test func aStructStatedAsAScalar() throws {
        let subtract = try reference("f64", Double.self)
        let fixed: Meters = try subtract.call(Meters(value: 5.5), Meters(value: 2))
        #expect(fixed.value == 3.5)
        let many = try CFunction(
            address: fixture("fx_many16"),
            declaration: "double (int8_t, double, int16_t, float, int32_t, double, int64_t, float, "
                + "uint8_t, double, uint16_t, float, uint32_t, double, uint64_t, float)")
        let result: Meters = try many.call(
            Int8(-7), Meters(value: 1.5), Int16(-300), Float(2.25), Int32(-70000), Meters(value: -3.125), Int64(-5_000_000_000),
            Float(4.5), UInt8(200), Meters(value: 0.0625), UInt16(60000), Float(-8.75), UInt32(4_000_000_000), Meters(value: 1024.5),
            UInt64(9_000_000_000), Float(0.5))
        #expect(result.value == fx_ref_many16())
    }

    /// The registers a typed call passes narrow integers in hold them extended to 32 bits, sign or zero
    /// by type, as clang's callees expect (the ABI leaves those bits undefined; clang relies on them).
    @Test func narrowArgumentsArriveExtendedTo32Bits() throws {
        #if arch(x86_64)
        func raw<T: CValue>(_ name: String, _ value: T) throws -> UInt64 {
            try CFunction(address: fixture(name), signature: CSignature(.uint64, [T.cType])).call(value)
        }
        #expect(try raw("fx_raw_i8", Int8(-1)) & 0xFFFF_FFFF == 0xFFFF_FFFF)
        #expect(try raw("fx_raw_i8", Int8(5)) & 0xFFFF_FFFF == 5)
        #expect(try raw("fx_raw_u8", UInt8(255)) & 0xFFFF_FFFF == 0xFF)
        #expect(try raw("fx_raw_i16", Int16(-2)) & 0xFFFF_FFFF == 0xFFFF_FFFE)
        #expect(try raw("fx_raw_bool", true) & 0xFFFF_FFFF == 1)
        #endif
    }

    #if arch(x86_64)  // `long double` as `Float80` is x86_64 only.
    @Test func longDoubleKeepsItsPrecision() throws {
        let tiny = Float80(sign: .plus, exponent: -63, significand: 1)
        let function = try CFunction(address: fixture("fx_ref_ld"), declaration: "long double (long double, long double)")
        let result: Float80 = try function.call(Float80(1) + tiny, Float80(0))
        #expect(result == fx_ref_ld(Float80(1) + tiny, 0))
        #expect(result != 1)  // a double would have rounded it away
    }
    #endif

    #if arch(x86_64)
    /// A `long double` as a run-time value keeps all 64 bits of its significand, both ways; a `double`
    /// would lose 11. It may be given as a `Float80`, a `Double` (held exactly) or its own bytes.
    @Test func longDoubleRunTimeValuesKeepTheirPrecision() throws {
        let tiny = Float80(sign: .plus, exponent: -63, significand: 1)
        let function = try CFunction(address: fixture("fx_ref_ld"), declaration: "long double (long double, long double)")
        #expect(try function.call([.longDouble(1 + tiny), .longDouble(0)]) == .longDouble(1 + tiny))
        #expect(try function.call([.longDouble(1 + tiny), .floatingPoint(1)]) == .longDouble(tiny))
        let bytes = withUnsafeBytes(of: 1 + tiny) { Array($0) }
        #expect(try function.call([.bytes(bytes), .longDouble(tiny)]) == .longDouble(1))
        // What a slot of that signature is called with and returns, as an observer of every slot sees it.
        let delegate = DynamicDelegate(protocol: ProtocolDescriptor(name: "ld", methods: [
            MethodDescriptor(name: "subtract", signature: function.signature)
        ]))
        try delegate.implement("subtract") { (a: Float80, b: Float80) -> Float80 in a - b }
        let seen = Mutex<[ObservedCall]>([])
        let token = delegate.observeAll { call in seen.withLock { $0.append(call) } }
        let slot = try CFunction(address: delegate.table.load(as: UnsafeRawPointer.self), signature: function.signature)
        #expect(try slot.call([.longDouble(1 + tiny), .longDouble(tiny)]) == .longDouble(1))
        token.cancel()
        #expect(seen.withLock { $0.map(\.arguments) } == [[.longDouble(1 + tiny), .longDouble(tiny)]])
        #expect(seen.withLock { $0.map(\.returnValue) } == [.longDouble(1)])
    }
    #endif

    @Test func structsByValueInAndOut() throws {
        func check<S: CValue>(_ name: String, _ a: S, _ b: S, direct: (S, S) -> S, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
            let function = try reference(name, S.self)
            // Compared member by member: padding bytes (a long double's top 6 among them) hold whatever the
            // callee left there.
            func members(_ bytes: [UInt8]) -> [[UInt8]] {
                leaves(of: S.cType).map { Array(bytes[$0.offset..<$0.offset + ($0.type == .longDouble ? 10 : $0.type.size)]) }
            }
            let typed: S = try function.call(a, b)
            let expected = withUnsafeBytes(of: direct(a, b)) { members(Array($0)) }
            #expect(withUnsafeBytes(of: typed) { members(Array($0)) } == expected, sourceLocation: sourceLocation)
            guard case .bytes(let dynamic) = try function.call([value(a), value(b)]) else {
                Issue.record("a struct's result is not bytes", sourceLocation: sourceLocation)
                return
            }
            #expect(members(dynamic) == expected, sourceLocation: sourceLocation)
        }
        try check("S3", S3(a: 1, b: 2, c: 250), S3(a: 4, b: 5, c: 10), direct: fx_ref_S3)
        try check("SDD", SDD(a: 1.5, b: -2), SDD(a: 0.25, b: 8), direct: fx_ref_SDD)
        try check("SPair", SPair(tag: 7, value: 0.5), SPair(tag: 9, value: 1.25), direct: fx_ref_SPair)
        try check("S24", S24(a: 1, b: -5, c: 2.5), S24(a: 2, b: 7, c: 0.5), direct: fx_ref_S24)
        try check("S64", S64(a: (1, 2, 3, 4, 5, 6, 7, 8)), S64(a: (10, 20, 30, 40, 50, 60, 70, 80)), direct: fx_ref_S64)
        #if arch(x86_64)  // `long double` as `Float80` is x86_64 only.
        try check("SLongDouble", SLongDouble(value: 1.25, tag: 3), SLongDouble(value: -0.5, tag: 4), direct: fx_ref_SLongDouble)
        #endif
    }

    /// A typed call whose types are not scalars the signature names (a struct, an `Int` for a `size_t`)
    /// takes the full check once per list of types (`CheckedCallTypes`): later calls of those types skip
    /// it and give the same results, while other types, a result asked for as another type, or a result
    /// checked where before it was ignored are still checked, and refused when they do not fit.
    @Test func aCheckPassedOnceServesLaterCallsOfTheSameTypes() throws {
        let function = try reference("SDD", SDD.self)
        for round in 0..<3 {
            let a = SDD(a: Double(round), b: 2), b = SDD(a: 0.25, b: Double(-round))
            let sum: SDD = try function.call(a, b)
            #expect(withUnsafeBytes(of: sum) { Array($0) } == withUnsafeBytes(of: fx_ref_SDD(a, b)) { Array($0) })
        }
        #expect(function.checkedCalls.contains(SDD.self, checkingResult: true, SDD.self, SDD.self))
        #expect(!function.checkedCalls.contains(SDD.self, checkingResult: false, SDD.self, SDD.self))
        // Not the types the check passed: still refused, every time.
        for _ in 0..<2 {
            #expect(throws: DelegateError.self) { let _: SDD = try function.call(SDD(a: 1, b: 2)) }
            #expect(throws: DelegateError.self) { let _: S3 = try function.call(SDD(a: 1, b: 2), SDD(a: 3, b: 4)) }
            #expect(throws: DelegateError.self) { let _: SDD = try function.call(S3(a: 1, b: 2, c: 3), SDD(a: 3, b: 4)) }
        }
        // A result ignored, then asked for as a type the function does not return.
        let strlen = try CFunction("strlen", declaration: "size_t strlen(const char *)")
        try "abc".withCString { text in
            for _ in 0..<2 {
                let length: Int = try strlen.call(text)
                #expect(length == 3)
                try strlen.call(text)
                #expect(throws: DelegateError.self) { let _: Double = try strlen.call(text) }
            }
        }
    }

    @Test func sixteenArguments() throws {
        let function = try CFunction(
            address: fixture("fx_many16"),
            declaration: "double (int8_t, double, int16_t, float, int32_t, double, int64_t, float, "
                + "uint8_t, double, uint16_t, float, uint32_t, double, uint64_t, float)")
        let result: Double = try function.call(
            Int8(-7), 1.5, Int16(-300), Float(2.25), Int32(-70000), -3.125, Int64(-5_000_000_000), Float(4.5),
            UInt8(200), 0.0625, UInt16(60000), Float(-8.75), UInt32(4_000_000_000), 1024.5, UInt64(9_000_000_000), Float(0.5))
        #expect(result == fx_ref_many16())
    }

    /// A typed call of a variadic function whose arguments all take registers is a direct call in
    /// registers where the register path runs (on x86_64 with the count of vector registers in al, which
    /// the callee's va_arg reads), its further arguments promoted as C promotes them; one with more than
    /// registers hold goes through libffi; both agree with C, on both CPUs and both paths.
    @Test func variadicCallsInRegistersPromoteAsC() throws {
        let sum = try CFunction(address: fixture("fx_sum_variadic"), declaration: "double (const char *, ...)")
        #expect(sum.variadicCallsInRegisters == RegisterPath.isAvailable)
        // Four integers after the named pointer fill the five integer registers; two vector ones.
        let registers: Double = try "iiiidd".withCString { kinds in
            try sum.call(kinds, Int8(-3), UInt8(200), Int16(-300), true, Float(0.5), 2.25)
        }
        let expected: Double = -3 + 200 - 300 + 1
        #expect(registers == expected + 2.75)
        // Integers only: al is 0 on x86_64.
        let integers: Double = try "ill".withCString { try sum.call($0, Int32(-9), Int64(1) << 40, Int(7)) }
        #expect(integers == Double(Int64(1) << 40) - 2)
        // Nine doubles: one more than the vector registers, so libffi's call.
        let nine: Double = try "ddddddddd".withCString { try sum.call($0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, Float(4.5)) }
        #expect(nine == 22.5)
        // Eight: every vector register.
        let eight: Double = try "dddddddd".withCString { try sum.call($0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, Float(4.0)) }
        #expect(eight == 18)
        // Run-time values take the same call, their variadic types stated as C passes them.
        let layout = try PreparedSignature.prepared(CSignature(.double, [.pointer, .int32, .double, .int64])).runTimeLayout
        #expect(layout.takesRegisters == RegisterPath.isAvailable)
        let dynamic = try "idl".withCString { kinds in
            try sum.call([.pointer(UInt(bitPattern: kinds)), .signed(-7), .floatingPoint(0.5), .signed(1 << 40)], variadicTypes: [.int32, .double, .int64])
        }
        #expect(dynamic == .floatingPoint(-6.5 + Double(1 << 40)))
        // glibc's own: a `char` and a `float` promoted, a string, a double.
        let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
        var buffer = [CChar](repeating: 0, count: 64)
        let count: Int32 = try "%c|%.2f|%s|%d|%.1f".withCString { format in
            try "ok".withCString { ok in
                try buffer.withUnsafeMutableBufferPointer {
                    try snprintf.call($0.baseAddress, $0.count, format, Int8(65), Float(0.25), ok, Int16(-12), 6.5)
                }
            }
        }
        #expect(count == 17)
        #expect(text(buffer) == "A|0.25|ok|-12|6.5")
    }

    #if arch(x86_64)  // `long double` as `Float80` is x86_64 only.
    @Test func snprintfWithEveryPromotedTypeMatchesC() throws {
        let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
        #expect(snprintf.isVariadic)
        #expect(snprintf.signature == CSignature(.int32, [.pointer, .size, .pointer], isVariadic: true))
        let tiny = Float80(sign: .plus, exponent: -63, significand: 1)
        let pointer = UnsafeMutableRawPointer(bitPattern: 0xDEAD_BEE0)
        var ours = [CChar](repeating: 0, count: 512)
        var theirs = [CChar](repeating: 0, count: 512)
        let count: Int32 = try "text".withCString { text in
            try ours.withUnsafeMutableBufferPointer { buffer in
                // Float, Int8/UInt8 (char), Int16/UInt16 (short), Bool: each promoted as C promotes them.
                try snprintf.call(
                    buffer.baseAddress, buffer.count, fx_format(), Int32(-42), Int(-9_000_000_000), 0.1,
                    Float(3.25), Int8(65), Int16(-1234), UInt32(4_000_000_000), text, pointer, UInt8(250), true,
                    Float80(1) + tiny, UInt64.max, UInt16(65535), Int8(-5))
            }
        }
        let expected = "text".withCString { text in
            fx_format_reference(
                &theirs, theirs.count, -42, -9_000_000_000, 0.1, 3.25, 65, -1234, 4_000_000_000, text, pointer, 250,
                true, Float80(1) + tiny, UInt64.max, 65535, -5)
        }
        #expect(count == expected)
        #expect(text(ours) == text(theirs))
        #expect(text(ours).hasPrefix("-42|-9000000000|0.10000000000000001|3.25|A|-1234|4000000000|text|0xdeadbee0|250|1|"))
    }
    #endif

    #if arch(x86_64)  // `long double` as `Float80` is x86_64 only.
    @Test func variadicArgumentsArePromotedAsCPromotesThem() throws {
        let sum = try CFunction(address: fixture("fx_sum_variadic"), declaration: "double (const char *, ...)")
        let result: Double = try "iiiiddlpL".withCString { kinds in
            try sum.call(
                kinds, Int8(-3), UInt8(200), Int16(-300), true, Float(0.5), 2.25, Int(1) << 40,
                UnsafeRawPointer(bitPattern: 4096), Float80(0.125))
        }
        // In parts: 6.2.3 cannot type-check the sum in one expression (every part is exact, so the order is free).
        let integers: Double = -3 + 200 - 300 + 1 + 4096, fractions: Double = 0.5 + 2.25 + 0.125
        #expect(result == integers + fractions + Double(Int(1) << 40))
        // The run-time form, stating the promoted types.
        let dynamic = try "idl".withCString { kinds in
            try sum.call(
                [.pointer(UInt(bitPattern: kinds)), .signed(-7), .floatingPoint(0.5), .signed(1 << 40)],
                variadicTypes: [.int32, .double, .int64])
        }
        #expect(dynamic == .floatingPoint(-7 + 0.5 + Double(1 << 40)))
        // No variadic arguments at all.
        let none: Double = try "".withCString { try sum.call($0) }
        #expect(none == 0)
    }
    #endif

    #if arch(x86_64)  // `long double` as `Float80` is x86_64 only.
    /// Typed variadic calls of up to 12 arguments store them straight-line, once a call with the same
    /// types prepared them; longer ones take the general path. Both pass every kind as C promotes it, the
    /// second and later calls as the first, and run-time values (found by the same key) agree.
    @Test func variadicCallsAgreeOnEveryPath() throws {
        let sum = try CFunction(address: fixture("fx_sum_variadic"), declaration: "double (const char *, ...)")
        // In parts: 6.2.3 cannot type-check the sum in one expression (every part is exact, so the order is free).
        let integers: Double = -3 + 200 - 300 + 1 + 4096 - 9 + 7, fractions: Double = 0.5 + 2.25 + 0.125
        let expected = integers + fractions + Double(Int(1) << 40)
        func short() throws -> Double {
            try "iiiiddlpLil".withCString { kinds in
                try sum.call(
                    kinds, Int8(-3), UInt8(200), Int16(-300), true, Float(0.5), 2.25, Int(1) << 40,
                    UnsafeRawPointer(bitPattern: 4096), Float80(0.125), Int32(-9), Int(7))
            }
        }
        func long() throws -> Double {  // 14 arguments: past the fixed-arity forms
            try "iiiiddlpLilii".withCString { kinds in
                try sum.call(
                    kinds, Int8(-3), UInt8(200), Int16(-300), true, Float(0.5), 2.25, Int(1) << 40,
                    UnsafeRawPointer(bitPattern: 4096), Float80(0.125), Int32(-9), Int(7), Int32(0), Int32(0))
            }
        }
        for _ in 0..<3 {
            #expect(try short() == expected)
            #expect(try long() == expected)
        }
        for _ in 0..<3 {
            let dynamic = try "iddl".withCString { kinds in
                try sum.call(
                    [.pointer(UInt(bitPattern: kinds)), .signed(-7), .floatingPoint(0.5), .floatingPoint(-0.25), .signed(1 << 40)],
                    variadicTypes: [.int32, .double, .double, .int64])
            }
            #expect(dynamic == .floatingPoint(-7 + 0.25 + Double(1 << 40)))
            let typed: Double = try "iddl".withCString { try sum.call($0, Int32(-7), 0.5, -0.25, Int64(1) << 40) }
            #expect(typed == -7 + 0.25 + Double(1 << 40))
        }
        // A run-time value the variadic type cannot hold is refused on the keyed path too.
        let name = "the function at \(try fixture("fx_sum_variadic"))"
        #expect(throws: DelegateError.valueMismatch(function: name, argument: 2, type: .int32, value: "1099511627776")) {
            try "i".withCString { try sum.call([.pointer(UInt(bitPattern: $0)), .signed(1 << 40)], variadicTypes: [.int32]) }
        }
    }
    #endif

    /// `open(path, O_CREAT | O_WRONLY, 0640)`: the mode travels as a variadic `int`, and the file gets it
    /// (less the process's umask, read from /proc, since setting it would race the other tests).
    @Test func openHonoursTheMode() throws {
        let open = try CFunction("open", declaration: "int open(const char *, int, ...)")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-open-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        defer { unlink(path) }
        let descriptor: Int32 = try path.withCString { try open.call($0, O_CREAT | O_WRONLY | O_EXCL, Int32(0o640)) }
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var status = stat()
        #expect(stat(path, &status) == 0)
        let umask = try currentUmask()
        #expect(status.st_mode & 0o777 == 0o640 & ~umask)
        #expect(status.st_mode & 0o777 != 0)

        // fcntl(F_GETFL) reads what open set; F_SETFL takes its flags as a variadic int.
        let fcntl = try CFunction("fcntl", declaration: "int fcntl(int, int, ...)")
        let flags: Int32 = try fcntl.call(descriptor, F_GETFL)
        #expect(flags & O_ACCMODE == O_WRONLY)
        let set: Int32 = try fcntl.call(descriptor, F_SETFL, flags | O_APPEND)
        #expect(set == 0)
        let after: Int32 = try fcntl.call(descriptor, F_GETFL)
        #expect(after & O_APPEND != 0)
    }

    /// The C string at the start of `buffer`.
    func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func currentUmask() throws -> mode_t {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        return try #require(mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
    }

    /// `ioctl(fd, FIONREAD, &count)` on a pipe with bytes in it.
    @Test func ioctlCountsTheBytesInAPipe() throws {
        let ioctl = try CFunction("ioctl", declaration: "int ioctl(int, unsigned long, ...)")
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(write(ends[1], "seventeen bytes!!", 17) == 17)
        var count: Int32 = -1
        let status: Int32 = try withUnsafeMutablePointer(to: &count) { try ioctl.call(ends[0], UInt(FIONREAD), $0) }
        #expect(status == 0)
        #expect(count == 17)
    }

    @Test func aLibraryOpenedByPathAndItsSymbols() throws {
        let sqlite = try CLibrary(path: "libsqlite3.so.0")
        #expect(sqlite.description == "CLibrary('libsqlite3.so.0')")
        let version = try CFunction("sqlite3_libversion_number", declaration: "int (void)", in: sqlite)
        let number: Int32 = try version.call()
        #expect(number >= 3_000_000)
        let name = try CFunction("sqlite3_libversion", declaration: "const char *(void)", in: sqlite)
        let text: UnsafePointer<CChar>? = try name.call()
        #expect(String(cString: try #require(text)).hasPrefix("3."))
        // The process finds glibc's functions; a `size_t` result may be read as `Int`, as Swift imports it.
        let strlen = try CFunction("strlen", declaration: "size_t strlen(const char *)")
        let length: Int = try "seven!!".withCString { try strlen.call($0) }
        #expect(length == 7)
        // A function's address, called through its own signature.
        let labs = try CFunction(address: try CLibrary.process.address(of: "labs"), signature: CSignature(.int64, [.int64]))
        #expect(try labs.call(Int(-12)) as Int == 12)
        #expect(try labs.call([.signed(-12)]) == .signed(12))
        #expect(labs.name.hasPrefix("the function at 0x"))
    }

    /// dlopen counts references: the library is unmapped once the `CLibrary` and every function found in
    /// it are gone. libbz2 is on every Debian system (dpkg needs it) and nothing else here loads it.
    @Test func aLibraryIsClosedWhenTheLastFunctionFoundInItGoes() throws {
        // Read to the end: /proc files report a size of 0, and the maps of a test process run long.
        func mapped() throws -> Bool {
            let maps = try #require(FileHandle(forReadingAtPath: "/proc/self/maps")).readDataToEndOfFile()
            return String(decoding: maps, as: UTF8.self).contains("libbz2.so")
        }
        #expect(try !mapped())
        var version: CFunction? = try CFunction(
            "BZ2_bzlibVersion", declaration: "const char *BZ2_bzlibVersion(void)", in: CLibrary(path: "libbz2.so.1.0"))
        #expect(try mapped())
        let text: UnsafePointer<CChar>? = try version?.call()
        #expect(String(cString: try #require(text)).hasPrefix("1.0"))
        version = nil
        #expect(try !mapped())
    }

    @Test func resultsMayBeIgnored() throws {
        let strlen = try CFunction("strlen", declaration: "size_t strlen(const char *)")
        try "x".withCString { try strlen.call($0) }
        let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
        var buffer = [CChar](repeating: 0, count: 16)
        try "%d".withCString { format in
            try buffer.withUnsafeMutableBufferPointer { try snprintf.call($0.baseAddress, $0.count, format, Int32(7)) }
        }
        #expect(text(buffer) == "7")
    }

    /// The messages of calling C's errors, word for word (the misuse table checks the errors themselves).
    @Test func callingErrorsSayWhatToFix() throws {
        func message(_ body: () throws -> Void) -> String? {
            do { try body() } catch { return "\(error)" }
            return nil
        }
        let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
        #expect(message { let _: Int32 = try snprintf.call(Int32(1)) }
            == "'snprintf' has C signature `int32_t (void *, size_t, void *, ...)`, but the call has C signature "
            + "`int32_t (int32_t)`: it takes at least 3 arguments, the call passes 1")
        let labs = try CFunction("labs", declaration: "long labs(long)")
        #expect(message { let _: Double = try labs.call(-3) }
            == "'labs' has C signature `int64_t (int64_t)`, but the call has C signature `double (int64_t)`: "
            + "the result is asked for as `double`, but the function returns `int64_t`")
        #expect(message { _ = try CFunction("abs", declaration: "int abs(int)").call([.signed(1 << 40)]) }
            == "argument 1 of 'abs' has C type `int32_t`, which cannot hold the value 1099511627776")
        #expect(message { _ = try snprintf.call([.pointer(0), .unsigned(0), .pointer(0), .floatingPoint(1)], variadicTypes: [.float]) }
            == "argument 4 of 'snprintf' is variadic, and C never passes `float` through `...`: C passes it as `double`; "
            + "state that type")
        #expect(message { _ = try CLibrary(path: "libdelegatekit-nope.so") }
            == "cannot open library 'libdelegatekit-nope.so': libdelegatekit-nope.so: cannot open shared object file: "
            + "No such file or directory")
        #expect(message { _ = try CFunction("delegatekit_nope", declaration: "int (void)") }?
            .hasPrefix("no symbol 'delegatekit_nope' in the process: ") == true)
    }

    /// An executable is not linked with `--export-dynamic`, so `CLibrary.process` does not find its own C
    /// functions (the fixtures', linked into this test executable); their address, as `CLibrary.process`'s
    /// documentation says, works.
    @Test func theExecutablesOwnFunctionsTakeTheirAddress() throws {
        var refusal: String?
        do { _ = try CFunction("fx_ref_i32", declaration: "int32_t fx_ref_i32(int32_t, int32_t)") } catch { refusal = "\(error)" }
        #expect(refusal?.hasPrefix("no symbol 'fx_ref_i32' in the process: ") == true)
        let address = unsafeBitCast(fx_ref_i32 as @convention(c) (Int32, Int32) -> Int32, to: UnsafeRawPointer.self)
        let subtract = try CFunction(address: address, declaration: "int32_t fx_ref_i32(int32_t, int32_t)")
        #expect(try subtract.call(Int32(7), Int32(3), returning: Int32.self) == 4)
    }

    @Test func descriptionsNameTheFunction() throws {
        let snprintf = try CFunction("snprintf", declaration: "int snprintf(char *, size_t, const char *, ...)")
        #expect(snprintf.description == "'snprintf' int32_t (void *, size_t, void *, ...)")
        #expect(CLibrary.process.description == "CLibrary.process")
        // The doc comment of `description` shows this very output, word for word.
        let source = try String(contentsOf: DocumentationExamplesTests.root.appendingPathComponent("Sources/DelegateKit/CallingC/CFunction.swift"), encoding: .utf8)
        let documented = source.components(separatedBy: "\n")
            .first { $0.contains("/// The function's name and C declaration: `") }?
            .components(separatedBy: "`").dropFirst().first
        #expect(documented == snprintf.description)
    }

    /// The DocC article Calling C and the measured figures in Benchmarks/README.md give one figure for a
    /// typed call against a direct call.
    @Test func theCallingCArticleGivesOneCostForATypedCall() throws {
        func words(_ path: String) throws -> String {
            try String(contentsOf: DocumentationExamplesTests.root.appendingPathComponent(path), encoding: .utf8)
                .split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        }
        func ratio(in text: String, after marker: String, before end: String) -> String? {
            guard let start = text.range(of: marker) else { return nil }
            let rest = text[start.upperBound...]
            guard let stop = rest.range(of: end) else { return nil }
            return String(rest[..<stop.lowerBound]).components(separatedBy: " ").last
        }
        let callingC = ratio(in: try words("Sources/DelegateKit/DelegateKit.docc/CallingC.md"),
                             after: "A typed call of a register-only signature is a direct call in registers (about", before: " a direct call")
        let performance = ratio(in: try words("Benchmarks/README.md"),
                                after: "a direct call in registers after one comparison per argument,", before: "; raw libffi")
        #expect(callingC != nil)
        #expect(callingC == performance)
    }
}

/// A `double` with a unit: a struct Swift would pass in an integer register, stated as C's `double`.
struct Meters: CValue, Equatable {
    var value: Double
    static var cType: CType { .double }
}

/// Runs one case of ``visitEveryScalarCase(_:)``: a scalar type's fixture function and two arguments.
protocol ScalarCaseVisitor {
    func visit<T: CValue & Equatable>(_ name: String, _ a: T, _ b: T, direct: (T, T) -> T) throws
}

/// Every scalar of the fixture with `fx_ref_<name>` and `fx_after_struct_<name>` (but `long double`), with
/// two arguments whose difference checks sign and zero extension of narrow types.
func visitEveryScalarCase(_ visitor: some ScalarCaseVisitor) throws {
    try visitor.visit("bool", true, false, direct: fx_ref_bool)
    try visitor.visit("i8", Int8(-100), 27, direct: fx_ref_i8)
    try visitor.visit("u8", UInt8(3), 200, direct: fx_ref_u8)
    try visitor.visit("i16", Int16(-30000), 2767, direct: fx_ref_i16)
    try visitor.visit("u16", UInt16(5), 65000, direct: fx_ref_u16)
    try visitor.visit("i32", Int32(-2_000_000_000), 147_483_648, direct: fx_ref_i32)
    try visitor.visit("u32", UInt32(7), 4_000_000_000, direct: fx_ref_u32)
    try visitor.visit("i64", Int64.min + 5, 3, direct: fx_ref_i64)
    try visitor.visit("u64", UInt64(1), UInt64.max, direct: fx_ref_u64)
    try visitor.visit("f32", Float(1.5), -2.25, direct: fx_ref_f32)
    try visitor.visit("f64", Double(1e300), -0.5, direct: fx_ref_f64)
    try visitor.visit("ptr", UnsafeMutableRawPointer(bitPattern: 0x1000_0000), UnsafeMutableRawPointer(bitPattern: 0x1234_5678_9A37), direct: fx_ref_ptr)
}
