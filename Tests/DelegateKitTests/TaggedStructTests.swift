import DelegateKit
import Glibc
import Testing

extension in_addr: CValue {  // No @retroactive: CValue is of this package.
    public static var cType: CType { .structure([.uint32]) }
}

/// A `struct tag` by value in a declaration copied from a header (`struct in_addr`, `struct timespec`):
/// its layout comes from `typedefs:`, under "struct tag" or the bare tag.
@Suite struct TaggedStructTests {
    @Test func glibcsInetNtoaTakesItsStructByValue() throws {
        let inAddr = CType.structure([.uint32])
        for key in ["struct in_addr", "in_addr"] {
            let inetNtoa = try CFunction("inet_ntoa", declaration: "char *inet_ntoa(struct in_addr)", typedefs: [key: inAddr])
            #expect(inetNtoa.signature == CSignature(.pointer, [inAddr]))
            // 127.0.0.1 in network byte order.
            let text = try inetNtoa.call(in_addr(s_addr: UInt32(0x7f00_0001).bigEndian), returning: UnsafeMutablePointer<CChar>?.self)
            #expect(text.map { String(cString: $0) } == "127.0.0.1")
        }
    }

    @Test func signaturesAndTablesTakeTheLayoutToo() throws {
        let timespec = CType.structure([.int64, .int64])
        let signature = try CSignature(parsing: "int (struct timespec, const struct timespec *)", typedefs: ["struct timespec": timespec])
        #expect(signature == CSignature(.int32, [timespec, .pointer]))
        let table = try ProtocolDescriptor(
            parsing: "struct clock_ops { double (*seconds)(struct timespec); };", name: "clock_ops",
            typedefs: ["struct timespec": timespec])
        #expect(table.methods.first?.signature == CSignature(.double, [timespec]))
        // A definition in the text wins over the same tag in `typedefs:`.
        let defined = try ProtocolDescriptor(
            parsing: "struct pair { int a; int b; }; struct ops { int (*sum)(struct pair); };", name: "ops",
            typedefs: ["struct pair": timespec])
        #expect(defined.methods.first?.signature == CSignature(.int32, [.structure([.int32, .int32])]))
    }

    @Test func withoutALayoutTheErrorNamesTypedefs() {
        #expect {
            try CSignature(parsing: "char *inet_ntoa(struct in_addr)")
        } throws: { error in
            "\(error)".contains("by value it needs its definition in the text or `typedefs: [\"struct in_addr\": .structure([…])]`")
        }
    }
}
