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
        #expect(below.fromAbove == TypedCall.none && below.typed == nil)
        let f = try #require(d.table.load(as: (@convention(c) (Int64) -> Void)?.self))
        f(41)
        #expect(seen.load(ordering: .relaxed) == 42)
    }

    typealias TypedCall = SlotPlan.TypedCall

    /// Seven parameters: in a debug build the thunk is in pack form and captures no `Captured` object,
    /// so the layer gets one of its own; in a release build its register form's.
    @Test func aPlainLayerOfSevenParametersIsReachedDirectlyToo() throws {
        let d = DynamicDelegate(protocol: try ProtocolDescriptor(
            parsing: "struct s { double (*f)(double, double, double, double, double, double, double); };", name: "s"))
        try d.implement("f") { (a: Double, _: Double, _: Double, _: Double, _: Double, _: Double, g: Double) -> Double in a * g }
        try d.override("f") { (next: Next<Double, Double, Double, Double, Double, Double, Double, Double>, a: Double, b: Double, c: Double, d: Double, e: Double, f: Double, g: Double) -> Double in
            next(a, b, c, d, e, f, g) + 1
        }
        let below = try Self.step(1, of: "f", in: d)
        #expect(below.fromAbove == .plain)
        #expect(below.typed is Captured7<Double, Double, Double, Double, Double, Double, Double, Double>)
        let f = try #require(d.table.load(as: (@convention(c) (Double, Double, Double, Double, Double, Double, Double) -> Double)?.self))
        #expect(f(1.5, 2, 3, 4, 5, 6, 7) == 11.5)
    }
}
