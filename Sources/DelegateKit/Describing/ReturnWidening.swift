/// How an integer result narrower than a register must be written for libffi (as a whole `ffi_arg`).
@usableFromInline
enum ReturnWidening: Sendable {
    case none
    case signExtend8, signExtend16, signExtend32
    case zeroExtend8, zeroExtend16, zeroExtend32

    /// Rewrites the value already stored at `result` as a full 64-bit register value.
    @inlinable @inline(__always)
    func apply(to result: UnsafeMutableRawPointer) {
        switch self {
        case .none: break
        case .signExtend8: result.storeBytes(of: Int64(result.load(as: Int8.self)), as: Int64.self)
        case .signExtend16: result.storeBytes(of: Int64(result.load(as: Int16.self)), as: Int64.self)
        case .signExtend32: result.storeBytes(of: Int64(result.load(as: Int32.self)), as: Int64.self)
        case .zeroExtend8: result.storeBytes(of: UInt64(result.load(as: UInt8.self)), as: UInt64.self)
        case .zeroExtend16: result.storeBytes(of: UInt64(result.load(as: UInt16.self)), as: UInt64.self)
        case .zeroExtend32: result.storeBytes(of: UInt64(result.load(as: UInt32.self)), as: UInt64.self)
        }
    }
}
