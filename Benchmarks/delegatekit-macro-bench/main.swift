#if Macros
// `swift run -c release delegatekit-macro-bench`: a `#CClosure` call from C against a direct C call, a raw
// libffi closure and `CClosure(_:)`, in one run, for the benchmark's three register-only signatures. The
// shapes DelegateKit has entries of its own for are measured by delegatekit-bench; these are the signatures
// that only the macro brings to two Swift frames.
//
// `--calls KIND SIGNATURE N` makes N calls and nothing else, for callgrind (instructions per call are the
// difference of two runs divided by the difference of their N). KIND: direct, libffi, closure, macro;
// SIGNATURE: i64, f64, mixed6.
import DelegateKitBenchmarkSupport
import DelegateKitMacros
import Foundation

enum Signature: Int, CaseIterable {
    case i64, f64, mixed6
    var name: String { ["int64_t (int64_t, int64_t)", "double (double, double)", "int32_t (void *, int32_t, int64_t, double, float, void *)"][rawValue] }
    /// Runs `n` calls of `f` from C.
    func loop(_ f: UnsafeRawPointer, _ n: Int64) {
        switch self {
        case .i64: _ = bench_loop_i64(f, n)
        case .f64: _ = bench_loop_f64(f, n)
        case .mixed6: _ = bench_loop_mixed6(f, n)
        }
    }
}

/// What C calls for one kind: the code's address and what keeps it alive.
struct Callee {
    let address: UnsafeRawPointer
    let owner: Any?
}

/// Each closure is a literal capturing a value that is zero at run time (which the compiler cannot see),
/// as users write one; the two kinds differ only by `#`.
func callee(_ kind: String, _ signature: Signature) throws -> Callee {
    let bias = bench_opaque_zero()
    switch (kind, signature) {
    case ("direct", _):
        return Callee(address: bench_direct(Int32(signature.rawValue)), owner: nil)
    case ("libffi", _):
        var code: UnsafeMutableRawPointer?
        let closure = bench_raw_closure(Int32(signature.rawValue), &code)
        return Callee(address: UnsafeRawPointer(code!), owner: RawClosure(closure))
    case ("closure", .i64):
        let closure = try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
        return Callee(address: closure.address, owner: closure)
    case ("macro", .i64):
        let closure = try #CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
        return Callee(address: closure.address, owner: closure)
    case ("closure", .f64):
        let closure = try CClosure { (a: Double, b: Double) -> Double in a + b + Double(bias) }
        return Callee(address: closure.address, owner: closure)
    case ("macro", .f64):
        let closure = try #CClosure { (a: Double, b: Double) -> Double in a + b + Double(bias) }
        return Callee(address: closure.address, owner: closure)
    case ("closure", .mixed6):
        let closure = try CClosure { (p: UnsafeMutableRawPointer?, a: Int32, b: Int64, c: Double, d: Float, q: UnsafeMutableRawPointer?) -> Int32 in
            (a &+ Int32(truncatingIfNeeded: b) &+ Int32(c) &+ Int32(d)) &+ (p == q ? 1 : 0) &+ Int32(truncatingIfNeeded: bias)
        }
        return Callee(address: closure.address, owner: closure)
    case ("macro", .mixed6):
        let closure = try #CClosure { (p: UnsafeMutableRawPointer?, a: Int32, b: Int64, c: Double, d: Float, q: UnsafeMutableRawPointer?) -> Int32 in
            (a &+ Int32(truncatingIfNeeded: b) &+ Int32(c) &+ Int32(d)) &+ (p == q ? 1 : 0) &+ Int32(truncatingIfNeeded: bias)
        }
        return Callee(address: closure.address, owner: closure)
    default:
        throw BenchError.unknownKind(kind)
    }
}

enum BenchError: Error { case unknownKind(String), usage }

/// A raw libffi closure, freed with its owner.
final class RawClosure {
    let closure: UnsafeMutableRawPointer?
    init(_ closure: UnsafeMutableRawPointer?) { self.closure = closure }
    deinit { bench_raw_closure_free(closure) }
}

let kinds = ["direct", "libffi", "closure", "macro"]
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--calls" {
    let rest = Array(arguments.dropFirst())
    guard rest.count == 3, let signature = Signature.allCases.first(where: { "\($0)" == rest[1] }), let n = Int64(rest[2]) else {
        throw BenchError.usage
    }
    let target = try callee(rest[0], signature)
    withExtendedLifetime(target.owner) { signature.loop(target.address, n) }
    exit(0)
}

print("#CClosure against a direct call, raw libffi and CClosure(_:): ns per call from C (median of interleaved runs)")
print("")
print("| signature | direct C | raw libffi | `CClosure(_:)` | `#CClosure` | `#CClosure` / direct | `#CClosure` / raw libffi | `CClosure(_:)` / direct |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for signature in Signature.allCases {
    let callees = try kinds.map { try callee($0, signature) }
    for callee in callees { signature.loop(callee.address, 1_000_000) }  // warm up
    let times = interleavedMedians(count: callees.count, calls: 2_000_000, rounds: 15) { index, n in
        signature.loop(callees[index].address, n)
    }
    withExtendedLifetime(callees) {}
    let (direct, libffi, closure, macro) = (times[0], times[1], times[2], times[3])
    print("| `\(signature.name)` | \(direct.formatted(2)) | \(libffi.formatted(2)) | \(closure.formatted(2)) | \(macro.formatted(2)) "
        + "| \((macro / direct).formatted(2))× | \((macro / libffi).formatted(2))× | \((closure / direct).formatted(2))× |")
}
#else
print("delegatekit-macro-bench measures #CClosure, which needs the package trait: swift run -c release --traits Macros delegatekit-macro-bench")
#endif
