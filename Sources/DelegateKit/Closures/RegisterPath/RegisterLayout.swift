/// Where each argument of a register-only signature arrives, for bodies that read libffi's argument
/// array (a ``CInvocation`` closure, a pack-based closure, observers): the registers are stored to the
/// stack and an array of pointers to them is made, which is all libffi's entry would have made, minus
/// the classification.
@usableFromInline
final class RegisterLayout: @unchecked Sendable {  // Immutable; the buffer is freed in deinit.
    /// Per argument: the register's byte offset in a block of 5 integer registers then 8 SSE registers.
    private let offsets: UnsafeMutableBufferPointer<Int>
    /// Bit `i` set when argument `i` travels in an SSE register; ``sseResult`` when the result does.
    @usableFromInline let classes: Int

    /// The bit of ``classes`` for a floating-point result.
    @inlinable static var sseResult: Int { 1 << 15 }

    /// The layout of `signature` when it is register-only on this platform, else nil.
    init?(_ signature: CSignature) {
        #if (arch(x86_64) || arch(arm64)) && os(Linux)
        var classes = 0
        switch signature.returnType {
        case .longDouble, .int128, .uint128, .complexFloat, .complexDouble, .complexLongDouble, .structure: return nil
        case .float, .double: classes = RegisterLayout.sseResult
        default: break
        }
        var integers = 0
        var sse = 0
        var offsets: [Int] = []
        for (index, type) in signature.argumentTypes.enumerated() {
            switch type {
            case .float, .double:
                offsets.append(40 + 8 * sse)
                sse += 1
                classes |= 1 << index
            case .bool, .int8, .uint8, .int16, .uint16, .int32, .uint32, .int64, .uint64, .size, .pointer:
                offsets.append(8 * integers)
                integers += 1
            case .void, .longDouble, .int128, .uint128, .complexFloat, .complexDouble, .complexLongDouble, .structure:
                return nil
            }
        }
        guard integers <= 5, sse <= 8 else { return nil }
        self.offsets = .allocate(capacity: offsets.count)
        _ = self.offsets.initialize(from: offsets)
        self.classes = classes
        #else
        return nil
        #endif
    }

    deinit { offsets.deallocate() }

    /// How many arguments the signature has.
    var argumentCount: Int { offsets.count }

    /// Writes each argument's register byte offset in the block `run` stores (see ``OpaqueBody``) at the
    /// start of `target`, one `Int` each: as bytes, which runs no generic code in a debug build.
    func copyOffsets(to target: UnsafeMutableRawBufferPointer) {
        let byteCount = offsets.count * MemoryLayout<Int>.stride
        precondition(byteCount <= target.count, "RegisterLayout.copyOffsets: \(offsets.count) offsets, room for \(target.count) bytes")
        if byteCount > 0 {
            target.baseAddress.unsafelyUnwrapped.copyMemory(from: UnsafeRawPointer(offsets.baseAddress.unsafelyUnwrapped), byteCount: byteCount)
        }
    }

    /// Runs `body` (libffi's form) on the arguments in `registers` and returns its result as registers.
    @inline(__always)
    func run(
        _ registers: ArgumentRegisters,
        _ body: (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void
    ) -> RegisterResult {
        var block = (registers.integers, registers.sse)
        // libffi's result buffer: 8 bytes hold every result here (a narrow integer as a whole register).
        var result = UInt64(0)
        // One pointer per argument (a register-only signature has at most 13), each set before it is read.
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 13) { list in
            withUnsafeMutableBytes(of: &block) { block in
                let base = block.baseAddress.unsafelyUnwrapped
                let arguments = list.baseAddress.unsafelyUnwrapped
                for index in 0..<offsets.count {
                    (arguments + index).initialize(to: base + offsets[index])
                }
                withUnsafeMutableBytes(of: &result) { body($0.baseAddress.unsafelyUnwrapped, arguments) }
            }
        }
        // The same 8 bytes whichever register C reads the result from.
        return RegisterResult(integer: result, sse: Double(bitPattern: result))
    }
}
