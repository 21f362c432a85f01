import DelegateKit
import DelegateKitFixtures
import Glibc

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
extension SLongDouble: CValue { public static var cType: CType { .structure([.longDouble, .int32]) } }
extension fx_point: CValue { public static var cType: CType { .structure([.float, .float]) } }

/// Every scalar leaf of `type` with its byte offset, nested structures flattened: what the fixture's
/// field tables list, computed from DelegateKit's layout rules instead of the C compiler's.
func leaves(of type: CType, at base: Int = 0) -> [(offset: Int, type: CType)] {
    guard case .structure(let members) = type else { return [(base, type)] }
    return zip(members, type.memberOffsets).flatMap { leaves(of: $0, at: base + $1) }
}

/// The fixture's formula in Swift: field-wise a + b, integers wrapping.
func combine(_ type: CType, _ a: UnsafeRawPointer, _ b: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
    for (offset, leaf) in leaves(of: type) {
        let x = a + offset, y = b + offset, r = out + offset
        switch leaf {
        case .uint8: r.storeBytes(of: x.load(as: UInt8.self) &+ y.load(as: UInt8.self), as: UInt8.self)
        case .uint16: r.storeBytes(of: x.loadUnaligned(as: UInt16.self) &+ y.loadUnaligned(as: UInt16.self), as: UInt16.self)
        case .int32: r.storeBytes(of: x.loadUnaligned(as: Int32.self) &+ y.loadUnaligned(as: Int32.self), as: Int32.self)
        case .int64: r.storeBytes(of: x.loadUnaligned(as: Int64.self) &+ y.loadUnaligned(as: Int64.self), as: Int64.self)
        case .float: r.storeBytes(of: x.loadUnaligned(as: Float.self) + y.loadUnaligned(as: Float.self), as: Float.self)
        case .double: r.storeBytes(of: x.loadUnaligned(as: Double.self) + y.loadUnaligned(as: Double.self), as: Double.self)
        case .longDouble:
            r.storeBytes(of: x.loadUnaligned(as: Float80.self) + y.loadUnaligned(as: Float80.self), as: Float80.self)
        default: fatalError("the fixture has no \(leaf) fields")
        }
    }
}

func combined<S: CValue>(_ a: S, _ b: S) -> S {
    var result = a
    withUnsafeBytes(of: a) { x in
        withUnsafeBytes(of: b) { y in
            withUnsafeMutableBytes(of: &result) { r in
                combine(S.cType, x.baseAddress!, y.baseAddress!, into: r.baseAddress!)
            }
        }
    }
    return result
}

/// A value of `S` whose every field holds a seeded, exactly representable number (no NaNs, so
/// floating-point fields compare exactly).
func sample<S: CValue>(_ type: S.Type, seed: UInt64) -> S {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    func next() -> Int64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int64(bitPattern: state)
    }
    let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<S>.stride, alignment: MemoryLayout<S>.alignment)
    defer { raw.deallocate() }
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<S>.stride)
    for (offset, leaf) in leaves(of: S.cType) {
        let r = raw + offset
        let n = next()
        switch leaf {
        case .uint8: r.storeBytes(of: UInt8(truncatingIfNeeded: n), as: UInt8.self)
        case .uint16: r.storeBytes(of: UInt16(truncatingIfNeeded: n), as: UInt16.self)
        case .int32: r.storeBytes(of: Int32(truncatingIfNeeded: n), as: Int32.self)
        case .int64: r.storeBytes(of: n, as: Int64.self)
        case .float: r.storeBytes(of: Float(n % 4096) / 4, as: Float.self)
        case .double: r.storeBytes(of: Double(n % 1_000_000) / 8, as: Double.self)
        case .longDouble: r.storeBytes(of: Float80(n) / 16, as: Float80.self)
        default: fatalError("the fixture has no \(leaf) fields")
        }
    }
    return raw.load(as: S.self)
}

/// Whether two values agree on every field the fixture lists (padding bytes are not compared: C does
/// not promise to keep them through a call).
func sameFields<S>(_ a: S, _ b: S, fields: [fx_field]) -> Bool {
    withUnsafeBytes(of: a) { x in
        withUnsafeBytes(of: b) { y in
            fields.allSatisfy { field in
                let size: Int = switch field.kind {
                case FX_U8: 1
                case FX_U16: 2
                case FX_I32, FX_F32: 4
                case FX_I64, FX_F64: 8
                default: 10  // long double: the 80 significant bits of its 16 bytes.
                }
                return memcmp(x.baseAddress! + field.offset, y.baseAddress! + field.offset, size) == 0
            }
        }
    }
}
