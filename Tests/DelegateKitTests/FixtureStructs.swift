import DelegateKit
import DelegateKitFixtures

// The fixture's structs, imported from C, state their C layout; DelegateKit checks each statement
// against Swift's layout, and the matrix tests check it against the C compiler's offsetof.
private func bytes(_ count: Int) -> CType { .structure(Array(repeating: .uint8, count: count)) }

extension S1: CValue { public static var cType: CType { .structure([.uint8]) } }
extension S2: CValue { public static var cType: CType { .structure([.uint8, .uint8]) } }
extension S3: CValue { public static var cType: CType { .structure([.uint8, .uint8, .uint8]) } }
extension S4: CValue { public static var cType: CType { .structure([.uint16, .uint16]) } }
extension S5: CValue { public static var cType: CType { .structure([bytes(5)]) } }
extension S6: CValue { public static var cType: CType { .structure([.uint16, .uint16, .uint16]) } }
extension S7: CValue { public static var cType: CType { .structure([bytes(7)]) } }
extension S8: CValue { public static var cType: CType { .structure([.int32, .float]) } }
extension SFF: CValue { public static var cType: CType { .structure([.float, .float]) } }
extension S12: CValue { public static var cType: CType { .structure([.float, .float, .float]) } }
extension SDD: CValue { public static var cType: CType { .structure([.double, .double]) } }
extension SLD16: CValue { public static var cType: CType { .structure([.int64, .double]) } }
extension SPair: CValue { public static var cType: CType { .structure([.uint8, .double]) } }
extension S17: CValue { public static var cType: CType { .structure([bytes(17)]) } }
extension S24: CValue { public static var cType: CType { .structure([.double, .int64, .float]) } }
extension S32: CValue { public static var cType: CType { .structure([.double, .double, .double, .double]) } }
extension S33: CValue { public static var cType: CType { .structure([bytes(33)]) } }
extension S64: CValue { public static var cType: CType { .structure([.structure(Array(repeating: .int64, count: 8))]) } }
extension N1: CValue { public static var cType: CType { .structure([S2.cType, .double]) } }
extension N2: CValue {
    public static var cType: CType { .structure([.structure([.float, .float]), .int64, S3.cType]) }
}
extension N3: CValue { public static var cType: CType { .structure([SDD.cType, SDD.cType]) } }
extension fx_pad: CValue { public static var cType: CType { .structure([.double, .double, .double, .double]) } }
extension fx_long_float: CValue { public static var cType: CType { .structure([.uint64, .float]) } }
extension fx_char_double: CValue { public static var cType: CType { .structure([CChar.cType, .double]) } }
extension SLongDouble: CValue { public static var cType: CType { .structure([.longDouble, .int32]) } }
extension fx_point: CValue { public static var cType: CType { .structure([.float, .float]) } }
