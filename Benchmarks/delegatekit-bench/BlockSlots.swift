import DelegateKitBenchmarkSupport
import DelegateKit

// The same computations as `@Slot` properties, whose closures take the fixed-arity path through Slot's
// generated per-arity initializers (see Benchmarks/README.md).

final class BlockI64: BlockDelegate {
    @Slot("f") var f: ((Int64, Int64) -> Int64)?
}

final class BlockF64: BlockDelegate {
    @Slot("f") var f: ((Double, Double) -> Double)?
}

final class BlockMixed6: BlockDelegate {
    @Slot("f") var f: ((UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?) -> Int32)?
}

final class BlockS32: BlockDelegate {
    @Slot("f") var f: ((bench_s32) -> bench_s32)?
}

/// A block delegate for the signature whose one `@Slot` holds the signature's closure.
func makeBlockSlot(_ signature: BenchSignature) throws -> BlockDelegate {
    switch signature {
    case .i64:
        let block = try BlockI64(protocol: signature.descriptor)
        block.f = addI64
        return block
    case .f64:
        let block = try BlockF64(protocol: signature.descriptor)
        block.f = addF64
        return block
    case .mixed6:
        let block = try BlockMixed6(protocol: signature.descriptor)
        block.f = mixed6
        return block
    case .s32:
        let block = try BlockS32(protocol: signature.descriptor)
        block.f = rotateS32
        return block
    }
}
