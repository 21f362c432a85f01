@testable import DelegateKit  // SlotPlan's steps: which way an override reaches the layer below
import DelegateKitFixtures
import Synchronization
import Testing

/// An override's `next` calls the plain layer below it directly when both have the same Swift types:
/// through the typed thunk's own `Captured` object, or one made for the layer where the thunk has none
/// (pack form). Checked on the plan the slot runs, and by calling the slot from C.
@Suite struct TypedLayerTests {
    /// The plan of `method`'s slot and its step `index`'s way from the layer above, and typed entry.
    static func step(_ index: Int, of method: String, in delegate: DynamicDelegate) throws -> (fromAbove: SlotPlan.TypedCall?, typed: TypedEntry?) {
        let slot = try delegate.descriptor.methodIndex(of: method)
        let plan = try #require(delegate.slots.state.withLock { $0.slots[slot].plan })
        try #require(plan.steps.count > index)
        return (SlotPlan.TypedCall(rawValue: plan.steps[index].fromAbove.load(ordering: .relaxed)),
                plan.steps[index].typed?.takeUnretainedValue())
    }

    @Test func anOverrideCallsThePlainLayerOfItsTypesThroughItsThunksObject() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 1 }
        try d.override("transform") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in next(c, v) * 10 }
        let below = try Self.step(1, of: "transform", in: d)
        #expect(below.fromAbove == .plain)
        #expect(below.typed is Captured2<UnsafeMutableRawPointer?, Int64, Int64>)
        #expect(transform(d, 4) == 50)
    }

    @Test func aPlainLayerThatReturnsNothingIsReachedUntyped() throws {
        let d = DynamicDelegate(protocol: try ProtocolDescriptor(parsing: "struct s { void (*f)(int64_t); };", name: "s"))
        let seen = Atomic<Int64>(0)
        try d.implement("f") { (v: Int64) in seen.store(v, ordering: .relaxed) }
        try d.override("f") { (next: Next<Int64, Void>, v: Int64) in next(v + 1) }
        let below = try Self.step(1, of: "f", in: d)
        #expect(below.fromAbove == SlotPlan.TypedCall.none && below.typed == nil)
        fx_call_void_i64(try #require(d.table.load(as: UnsafeRawPointer?.self)), 41)
        #expect(seen.load(ordering: .relaxed) == 42)
    }

    /// Eight parameters, all in vector registers: in a debug build the thunk is in pack form and captures
    /// no `Captured` object, so the layer gets one of its own; in a release build its register form's.
    @Test func aPlainLayerOfEightParametersIsReachedDirectlyToo() throws {
        let d = DynamicDelegate(protocol: try ProtocolDescriptor(
            parsing: "struct s { int16_t (*f)(double, double, double, double, double, double, double, float); };", name: "s"))
        try d.implement("f") { (a: Double, _: Double, _: Double, _: Double, _: Double, _: Double, g: Double, h: Float) -> Int16 in
            Int16(a * g + Double(h))
        }
        try d.override("f") { (next: Next<Double, Double, Double, Double, Double, Double, Double, Float, Int16>, a: Double, b: Double, c: Double, d: Double, e: Double, f: Double, g: Double, h: Float) -> Int16 in
            next(a, b, c, d, e, f, g, h) * 10
        }
        let below = try Self.step(1, of: "f", in: d)
        #expect(below.fromAbove == .plain)
        #expect(below.typed is Captured8<Double, Double, Double, Double, Double, Double, Double, Float, Int16>)
        #expect(fx_call_floating8(try #require(d.table.load(as: UnsafeRawPointer?.self))) == 150)  // (1 × 7 + 8.5) → 15, × 10
    }

    /// Seven parameters, the last two on the caller's stack: pack form in a debug and a release build
    /// alike, so the layer is one of its own in both.
    @Test func aPlainLayerOfSevenParametersOnTheStackIsReachedDirectlyToo() throws {
        let d = DynamicDelegate(protocol: try ProtocolDescriptor(
            parsing: "struct s { bool (*f)(int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t); };", name: "s"))
        try d.implement("f") { (a: Int32, b: Int32, c: Int32, d: Int32, e: Int32, f: Int32, g: Int32) -> Bool in
            a + b + c + d + e + f + g == 28
        }
        try d.override("f") { (next: Next<Int32, Int32, Int32, Int32, Int32, Int32, Int32, Bool>, a: Int32, b: Int32, c: Int32, d: Int32, e: Int32, f: Int32, g: Int32) -> Bool in
            next(a, b, c, d, e, f, g + 1)
        }
        let below = try Self.step(1, of: "f", in: d)
        #expect(below.fromAbove == .plain)
        #expect(below.typed is Captured7<Int32, Int32, Int32, Int32, Int32, Int32, Int32, Bool>)
        // C passes 1 … 7; the layer sees the override's 1 … 6, 8, which do not sum to 28.
        #expect(fx_call_bool7(try #require(d.table.load(as: UnsafeRawPointer?.self))) == 0)
    }
}
