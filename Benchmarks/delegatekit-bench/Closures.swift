import DelegateKitBenchmarkSupport
import DelegateKit

// The same computation as the C reference functions, written once per signature as Swift closures and
// handed as they are to every Swift path (the hand-written thunk's box holds the same closures).
let addI64: @Sendable (Int64, Int64) -> Int64 = { a, b in a &+ b }
let addF64: @Sendable (Double, Double) -> Double = { a, b in a + b }
let mixed6: @Sendable (UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?) -> Int32 = { p, a, b, c, d, q in
    (a &+ Int32(truncatingIfNeeded: b) &+ Int32(c) &+ Int32(d)) &+ (p == q ? 1 : 0)
}
let rotateS32: @Sendable (bench_s32) -> bench_s32 = { s in bench_s32(a: s.b, b: s.c, c: s.d, d: s.a + 1) }

/// A `CClosure` of each signature, made through the typed API from the global closures above (not
/// capturing: what the benchmark measured before it had the two forms below).
func makeClosure(_ signature: BenchSignature) throws -> CClosure {
    switch signature {
    case .i64: return try CClosure(addI64)
    case .f64: return try CClosure(addF64)
    case .mixed6: return try CClosure(mixed6)
    case .s32: return try CClosure(rotateS32)
    }
}

/// A comparator, `int (const void *, const void *)`: a common callback shape, whose closure enters by the
/// shape's own register entry (what `--measure-create comparator` makes and frees).
func makeComparator() throws -> CClosure {
    try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in a == b ? 0 : 1 }
}

/// A `CClosure` of each signature written as users write one: a literal capturing a value (zero at run
/// time, which the compiler cannot see), at the call.
func makeCapturingLiteral(_ signature: BenchSignature) throws -> CClosure {
    let bias = bench_opaque_zero()
    switch signature {
    case .i64: return try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
    case .f64: return try CClosure { (a: Double, b: Double) -> Double in a + b + Double(bias) }
    case .mixed6:
        return try CClosure { (p: UnsafeMutableRawPointer?, a: Int32, b: Int64, c: Double, d: Float, q: UnsafeMutableRawPointer?) -> Int32 in
            (a &+ Int32(truncatingIfNeeded: b) &+ Int32(c) &+ Int32(d)) &+ (p == q ? 1 : 0) &+ Int32(truncatingIfNeeded: bias)
        }
    case .s32: return try CClosure { (s: bench_s32) -> bench_s32 in bench_s32(a: s.b, b: s.c, c: s.d, d: s.a + 1 + Double(bias)) }
    }
}

/// The same capturing closures, stored in a constant first and then handed over: the closure exists in
/// its own function type before the generic initializer receives it, so Swift wraps it in a conversion.
func makeClosureValue(_ signature: BenchSignature) throws -> CClosure {
    let bias = bench_opaque_zero()
    switch signature {
    case .i64:
        let body: @Sendable (Int64, Int64) -> Int64 = { a, b in a &+ b &+ bias }
        return try CClosure(body)
    case .f64:
        let body: @Sendable (Double, Double) -> Double = { a, b in a + b + Double(bias) }
        return try CClosure(body)
    case .mixed6:
        let body: @Sendable (UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?) -> Int32 = { p, a, b, c, d, q in
            (a &+ Int32(truncatingIfNeeded: b) &+ Int32(c) &+ Int32(d)) &+ (p == q ? 1 : 0) &+ Int32(truncatingIfNeeded: bias)
        }
        return try CClosure(body)
    case .s32:
        let body: @Sendable (bench_s32) -> bench_s32 = { s in bench_s32(a: s.b, b: s.c, c: s.d, d: s.a + 1 + Double(bias)) }
        return try CClosure(body)
    }
}

/// The same computation through `CClosure(signature:)`: the signature known only at run time, the
/// arguments read and the result set through `CInvocation`.
func makeInvocationClosure(_ signature: BenchSignature) throws -> CClosure {
    switch signature {
    case .i64:
        return try CClosure(signature: signature.cSignature) { call in
            call.setReturnValue(addI64(call.argument(0, as: Int64.self), call.argument(1, as: Int64.self)))
        }
    case .f64:
        return try CClosure(signature: signature.cSignature) { call in
            call.setReturnValue(addF64(call.argument(0, as: Double.self), call.argument(1, as: Double.self)))
        }
    case .mixed6:
        return try CClosure(signature: signature.cSignature) { call in
            call.setReturnValue(mixed6(
                call.argument(0, as: UnsafeMutableRawPointer?.self), call.argument(1, as: Int32.self),
                call.argument(2, as: Int64.self), call.argument(3, as: Double.self), call.argument(4, as: Float.self),
                call.argument(5, as: UnsafeMutableRawPointer?.self)))
        }
    case .s32:
        return try CClosure(signature: signature.cSignature) { call in
            call.setReturnValue(rotateS32(call.argument(0, as: bench_s32.self)))
        }
    }
}

/// Implements the delegate's one method "f" with the signature's closure.
func implement(_ delegate: DynamicDelegate, _ signature: BenchSignature, key: String? = nil) throws {
    switch signature {
    case .i64: try delegate.implement("f", key: key, addI64)
    case .f64: try delegate.implement("f", key: key, addF64)
    case .mixed6: try delegate.implement("f", key: key, mixed6)
    case .s32: try delegate.implement("f", key: key, rotateS32)
    }
}

/// Adds a layer that passes every call to the one below unchanged.
func overridePassingThrough(_ delegate: DynamicDelegate, _ signature: BenchSignature) throws {
    switch signature {
    case .i64: try delegate.override("f") { (next: Next<Int64, Int64, Int64>, a: Int64, b: Int64) -> Int64 in next(a, b) }
    case .f64: try delegate.override("f") { (next: Next<Double, Double, Double>, a: Double, b: Double) -> Double in next(a, b) }
    case .mixed6:
        try delegate.override("f") { (next: Next<UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?, Int32>,
                                      p: UnsafeMutableRawPointer?, a: Int32, b: Int64, c: Double, d: Float, q: UnsafeMutableRawPointer?) -> Int32 in
            next(p, a, b, c, d, q)
        }
    case .s32: try delegate.override("f") { (next: Next<bench_s32, bench_s32>, s: bench_s32) -> bench_s32 in next(s) }
    }
}

/// Adds an observer that does nothing, `.before` or `.after`.
func observeDoingNothing(_ delegate: DynamicDelegate, _ signature: BenchSignature, _ timing: ObservationTiming) throws -> ObservationToken {
    switch signature {
    case .i64: return try delegate.observe("f", timing) { (_: Int64, _: Int64) in }
    case .f64: return try delegate.observe("f", timing) { (_: Double, _: Double) in }
    case .mixed6:
        return try delegate.observe("f", timing) { (_: UnsafeMutableRawPointer?, _: Int32, _: Int64, _: Double, _: Float, _: UnsafeMutableRawPointer?) in }
    case .s32: return try delegate.observe("f", timing) { (_: bench_s32) in }
    }
}

// The hand-written alternative: a concrete box behind a `void *` context argument.
final class BoxI64 { let f: (Int64, Int64) -> Int64; init(_ f: @escaping (Int64, Int64) -> Int64) { self.f = f } }
final class BoxF64 { let f: (Double, Double) -> Double; init(_ f: @escaping (Double, Double) -> Double) { self.f = f } }
final class BoxMixed6 {
    let f: (UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?) -> Int32
    init(_ f: @escaping (UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?) -> Int32) { self.f = f }
}
final class BoxS32 { let f: (bench_s32) -> bench_s32; init(_ f: @escaping (bench_s32) -> bench_s32) { self.f = f } }

let thunkI64: @convention(c) (UnsafeMutableRawPointer?, Int64, Int64) -> Int64 = { context, a, b in
    Unmanaged<BoxI64>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.f(a, b) }
}
let thunkF64: @convention(c) (UnsafeMutableRawPointer?, Double, Double) -> Double = { context, a, b in
    Unmanaged<BoxF64>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.f(a, b) }
}
let thunkMixed6: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?) -> Int32 = {
    context, p, a, b, c, d, q in
    Unmanaged<BoxMixed6>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.f(p, a, b, c, d, q) }
}
let thunkS32: @convention(c) (UnsafeMutableRawPointer?, bench_s32) -> bench_s32 = { context, s in
    Unmanaged<BoxS32>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.f(s) }
}

/// The hand-written thunk and its retained box (released by the caller).
func handWrittenThunk(_ signature: BenchSignature) -> (function: UnsafeRawPointer, context: UnsafeMutableRawPointer) {
    switch signature {
    case .i64: return (unsafeBitCast(thunkI64, to: UnsafeRawPointer.self), Unmanaged.passRetained(BoxI64(addI64)).toOpaque())
    case .f64: return (unsafeBitCast(thunkF64, to: UnsafeRawPointer.self), Unmanaged.passRetained(BoxF64(addF64)).toOpaque())
    case .mixed6: return (unsafeBitCast(thunkMixed6, to: UnsafeRawPointer.self), Unmanaged.passRetained(BoxMixed6(mixed6)).toOpaque())
    case .s32: return (unsafeBitCast(thunkS32, to: UnsafeRawPointer.self), Unmanaged.passRetained(BoxS32(rotateS32)).toOpaque())
    }
}

// The plain alternative where C passes no context: a `@convention(c)` closure whose state is a global
// (zero at run time, which the compiler cannot see), the same computation as the capturing literals.
nonisolated(unsafe) var plainBias = bench_opaque_zero()
let plainI64: @convention(c) (Int64, Int64) -> Int64 = { a, b in a &+ b &+ plainBias }
let plainF64: @convention(c) (Double, Double) -> Double = { a, b in a + b + Double(plainBias) }
let plainMixed6: @convention(c) (UnsafeMutableRawPointer?, Int32, Int64, Double, Float, UnsafeMutableRawPointer?) -> Int32 = {
    p, a, b, c, d, q in
    (a &+ Int32(truncatingIfNeeded: b) &+ Int32(c) &+ Int32(d)) &+ (p == q ? 1 : 0) &+ Int32(truncatingIfNeeded: plainBias)
}
let plainS32: @convention(c) (bench_s32) -> bench_s32 = { s in bench_s32(a: s.b, b: s.c, c: s.d, d: s.a + 1 + Double(plainBias)) }

/// The plain closure of a signature, as the function pointer C calls.
func plainClosure(_ signature: BenchSignature) -> UnsafeRawPointer {
    switch signature {
    case .i64: return unsafeBitCast(plainI64, to: UnsafeRawPointer.self)
    case .f64: return unsafeBitCast(plainF64, to: UnsafeRawPointer.self)
    case .mixed6: return unsafeBitCast(plainMixed6, to: UnsafeRawPointer.self)
    case .s32: return unsafeBitCast(plainS32, to: UnsafeRawPointer.self)
    }
}
