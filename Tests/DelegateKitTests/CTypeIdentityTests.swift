import DelegateKit
import Foundation
import Testing

/// On LP64 Linux `size_t`, `unsigned long` and `uint64_t` are one C type, as are `ssize_t`, `long` and
/// `int64_t`; `size_t` stays a spelling only so that a closure may use Swift's `Int` there.
@Suite struct CTypeIdentityTests {
    @Test func sizeTIsUnsignedLongIsUInt64() throws {
        #expect(try CSignature(parsing: "size_t (const char *)") == CSignature(.uint64, [.pointer]))
        let spellings = ["size_t", "unsigned long", "uint64_t", "unsigned long long", "uintptr_t"]
        let types = try spellings.map { try CSignature(parsing: "\($0) (void)").returnType }
        #expect(Set(types).count == 1)
        #expect(types.allSatisfy { $0 == .uint64 && $0.hashValue == CType.uint64.hashValue })
        let signed = try ["ssize_t", "long", "int64_t", "long long", "off_t"].map { try CSignature(parsing: "\($0) (void)").returnType }
        #expect(Set(signed) == [.int64])
        #expect(CType.size != .int64)
        #expect(CType.structure([.size, .pointer]) == .structure([.uint64, .pointer]))
        #expect(CType.structure([.size]) != .structure([.int64]))
        #expect(Set([CSignature(.size, [.size]), CSignature(.uint64, [.uint64])]).count == 1)
    }

    /// Swift's numbers take their C type from their width and format: the same type the parser makes of
    /// the C spelling.
    @Test func swiftsNumbersAreTheCTypesOfTheirWidth() throws {
        var pairs: [(any CValue.Type, String)] = [
            (Int8.self, "signed char"), (UInt8.self, "unsigned char"), (Int16.self, "short"), (UInt16.self, "unsigned short"),
            (Int32.self, "int"), (UInt32.self, "unsigned int"), (Int64.self, "long long"), (UInt64.self, "unsigned long long"),
            (Int.self, "long"), (UInt.self, "unsigned long"), (Int128.self, "__int128"), (UInt128.self, "unsigned __int128"),
            (Float.self, "float"), (Double.self, "double"), (Bool.self, "_Bool"),
            (UnsafeRawPointer.self, "const void *"), (Optional<UnsafeMutablePointer<CChar>>.self, "char *"),
        ]
        #if arch(x86_64)
        pairs.append((Float80.self, "long double"))
        #endif
        for (type, spelling) in pairs {
            #expect(type.cType == (try CSignature(parsing: "\(spelling) (void)").returnType), "\(type)")
        }
    }

    /// A floating-point type of a format no ``CType`` describes is refused when a closure is made, not
    /// passed as something else: C's `_Float16` travels in floating-point registers.
    @Test func aNumberOfAnotherFormatIsRefused() {
        #expect(Float16.cType == .structure([]))
        #expect(throws: DelegateError.layoutMismatch(type: "Swift.Float16", cType: .structure([]), swiftSize: 2, swiftAlignment: 2)) {
            _ = try CClosure { (x: Float16) in _ = x }
        }
    }

    @Test func glibcsCookieTableEqualsOneWrittenWithFixedWidthTypes() throws {
        // Parsed from glibc's own header: `ssize_t` and `size_t` in it, `int64_t`/`uint64_t` below.
        let header = try String(contentsOfFile: Multiarch.includeDirectory + "/bits/types/cookie_io_functions_t.h", encoding: .utf8)
        let parsed = try ProtocolDescriptor(
            parsing: header, name: "cookie_io_functions_t", typedefs: ["__ssize_t": .int64, "__off64_t": .int64])
        let written = ProtocolDescriptor(name: "cookie_io_functions_t", methods: [
            MethodDescriptor(name: "read", signature: CSignature(.int64, [.pointer, .pointer, .uint64])),
            MethodDescriptor(name: "write", signature: CSignature(.int64, [.pointer, .pointer, .uint64])),
            MethodDescriptor(name: "seek", signature: CSignature(.int32, [.pointer, .pointer, .int32])),
            MethodDescriptor(name: "close", signature: CSignature(.int32, [.pointer])),
        ])
        #expect(parsed == written)
        #expect(parsed.hashValue == written.hashValue)
    }

    @Test func theSpellingStillDecidesWhetherIntFits() throws {
        let descriptor = try ProtocolDescriptor(
            parsing: "struct io { size_t (*count)(size_t n); uint64_t (*hash)(uint64_t n); };", name: "io")
        let delegate = DynamicDelegate(protocol: descriptor)
        try delegate.implement("count") { (n: Int) -> Int in n + 1 }  // Swift's own import of size_t
        #expect(throws: DelegateError.self) { try delegate.implement("hash") { (n: Int) -> Int in n } }
        try delegate.implement("hash") { (n: UInt64) -> UInt64 in n &* 31 }
        typealias Function = @convention(c) (UInt64) -> UInt64
        let table = delegate.table.assumingMemoryBound(to: Function?.self)
        #expect(table[0]?(41) == 42)
        #expect(table[1]?(2) == 62)
    }

    @Test func aClosureKeepsTheSpellingItWasMadeWith() throws {
        // Both spellings share a cif's layout, but each closure reports, and reads its arguments by, its own.
        let unsigned = try CClosure(signature: CSignature(.uint64, [.uint64])) { call in
            call.setReturnValue(call.argument(0, as: UInt64.self) + 1)
        }
        let sized = try CClosure(signature: try CSignature(parsing: "size_t (size_t)")) { call in
            call.setReturnValue(call.argument(0, as: Int.self) * 2)
        }
        #expect(unsigned.signature.description == "uint64_t (uint64_t)")
        #expect(sized.signature.description == "size_t (size_t)")
        #expect(unsigned.signature == sized.signature)
        let double: @convention(c) (Int) -> Int = try sized.functionPointer()
        #expect(double(21) == 42)
        let increment: @convention(c) (UInt64) -> UInt64 = try unsigned.functionPointer()
        #expect(increment(41) == 42)
    }
}

extension Float16: CValue {}
