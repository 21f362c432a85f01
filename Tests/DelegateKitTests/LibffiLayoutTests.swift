@testable import DelegateKit
import Testing

/// DelegateKit computes C layouts itself (for tables and checks); libffi computes them again when it
/// prepares a signature. The two must agree for every kind of type.
@Suite struct LibffiLayoutTests {
    @Test(arguments: [
        CType.bool, .int8, .uint8, .int16, .uint16, .int32, .uint32, .int64, .uint64, .size, .float, .double,
        .longDouble, .pointer,
        .structure([.uint8, .double]), .structure([.double, .uint8]), .structure([.uint8, .uint16, .uint8]),
        .structure([.structure([.uint8, .uint8]), .double]), .structure([.longDouble, .int32]),
        .structure([.float, .structure([.uint8]), .int64, .structure([.uint16, .structure([.uint8, .float])])]),
        .structure(Array(repeating: .uint8, count: 33)),
    ])
    func libffiAgreesWithOurLayout(_ type: CType) throws {
        let prepared = try PreparedSignature.prepared(CSignature(type, []))
        #expect(prepared.ffiReturnLayout.size == type.size)
        #expect(prepared.ffiReturnLayout.alignment == type.alignment)
    }

    @Test func oneCifPerSignature() throws {
        let signature = CSignature(.int64, [.int64, .int64])
        let first = try CClosure { (a: Int64, b: Int64) -> Int64 in a + b }
        let second = try CClosure(signature: signature) { _ in }
        #expect(first.prepared === second.prepared)
        #expect(try PreparedSignature.prepared(signature) === first.prepared)
    }
}
