import DelegateKit
import DelegateKitFixtures
import Testing

/// `CInvocation` checks a type its quick test does not settle (a struct, `Int` for `size_t`) in full once
/// per closure and Swift type, and notes it: what it reads and sets must stay right when calls alternate
/// between types that pass (ReleaseStopTests has the case of one that does not, after one that did).
@Suite struct InvocationCheckTests {
    /// `S8`'s C layout, `struct { int32_t; float; }`, stated by a Swift type of its own.
    struct Pair: CValue {
        var a: Int32
        var b: Float
        static var cType: CType { .structure([.int32, .float]) }
    }

    @Test func aStructReadAndSetAsTwoTypesOfItsLayoutOnAlternateCalls() throws {
        nonisolated(unsafe) var calls = 0
        let swap = try CClosure(signature: CSignature(S8.cType, [S8.cType, S8.cType])) { call in
            calls += 1
            if calls % 2 == 1 {
                let (x, y) = (call.argument(0, as: S8.self), call.argument(1, as: Pair.self))
                call.setReturnValue(S8(a: y.a + x.a, b: x.b))
            } else {
                let (x, y) = (call.argument(0, as: Pair.self), call.argument(1, as: S8.self))
                call.setReturnValue(Pair(a: y.a - x.a, b: y.b))
            }
        }
        for round in 0..<3 {
            let base = Int32(round * 10)
            let sum = fx_call_S8(swap.address, S8(a: base + 1, b: 0.5), S8(a: 2, b: 8))
            #expect(sum.a == base + 3 && sum.b == 0.5)
            let difference = fx_call_S8(swap.address, S8(a: 2, b: 0.25), S8(a: base + 7, b: 4))
            #expect(difference.a == base + 5 && difference.b == 4)
        }
        #expect(calls == 6)
    }

    @Test func intForSizeTOnEveryCall() throws {
        let measure = try CClosure(signature: CSignature(.size, [.size])) { call in
            call.setReturnValue(call.argument(0, as: Int.self) * 3)
        }
        let triple = try measure.functionPointer(as: (@convention(c) (Int) -> Int).self)
        for n in [1, 7, 1 << 40] { #expect(triple(n) == n * 3) }
    }
}
