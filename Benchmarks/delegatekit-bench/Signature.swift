import DelegateKitBenchmarkSupport
import DelegateKit

extension bench_s32: CValue {
    public static var cType: CType { .structure([.double, .double, .double, .double]) }
}

/// The four signatures every path is measured with.
enum BenchSignature: Int, CaseIterable, Sendable {
    case i64, f64, mixed6, s32

    var label: String {
        switch self {
        case .i64: return "int64(int64,int64)"
        case .f64: return "double(double,double)"
        case .mixed6: return "int32(void*,int32,int64,double,float,void*)"
        case .s32: return "struct32(struct32)"
        }
    }

    var cSignature: CSignature {
        switch self {
        case .i64: return CSignature(.int64, [.int64, .int64])
        case .f64: return CSignature(.double, [.double, .double])
        case .mixed6: return CSignature(.int32, [.pointer, .int32, .int64, .double, .float, .pointer])
        case .s32: return CSignature(bench_s32.cType, [bench_s32.cType])
        }
    }

    /// A one-method protocol with this signature, for the delegate paths.
    var descriptor: ProtocolDescriptor {
        ProtocolDescriptor(name: "bench", methods: [MethodDescriptor(name: "f", signature: cSignature)])
    }

    /// Runs the C loop `n` times through `function` (with `context` first, for the hand-written thunk).
    /// Returns a checksum of the results so paths can be checked against each other.
    func loop(_ function: UnsafeRawPointer, context: UnsafeMutableRawPointer?, _ n: Int64) -> Double {
        switch (self, context) {
        case (.i64, nil): return Double(bench_loop_i64(function, n))
        case (.f64, nil): return bench_loop_f64(function, n)
        case (.mixed6, nil): return Double(bench_loop_mixed6(function, n))
        case (.s32, nil): let s = bench_loop_s32(function, n); return s.a + s.b * 3 + s.c * 5 + s.d * 7
        case (.i64, let context?): return Double(bench_loop_context_i64(function, context, n))
        case (.f64, let context?): return bench_loop_context_f64(function, context, n)
        case (.mixed6, let context?): return Double(bench_loop_context_mixed6(function, context, n))
        case (.s32, let context?): let s = bench_loop_context_s32(function, context, n); return s.a + s.b * 3 + s.c * 5 + s.d * 7
        }
    }
}
