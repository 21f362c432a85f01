@testable import DelegateKit  // The hooks' internal half, which exists without the `Macros` trait
import DelegateKitFixtures
import Testing

/// The library's half of `#CClosure`, through the internal names its public hooks (`CClosure(_:_direct:)`,
/// `_DirectRegisters`, which exist only with the package trait `Macros`) wrap, so that it runs in every
/// place CI tests, aarch64 included; the macro's own tests are DelegateKitMacrosTests, with the trait. An
/// entry written as the expansion writes one, here by hand, and counting its calls, must be what C enters
/// on the register path and only there; where the Swift types cannot be converted by type, the closure
/// must run as `CClosure(_:)` does.
@Suite(.serialized) struct DirectEntryTests {
    /// Calls of every counting entry (the suite is serialized, and C calls on this thread).
    nonisolated(unsafe) static var entered = 0

    /// What `#CClosure { (a: Int64, b: Int64) -> Int64 in … }` expands to, with a count of entries.
    final class Adder: _DirectEntry, @unchecked Sendable {
        let body: @Sendable (Int64, Int64) -> Int64
        init(_ body: @escaping @Sendable (Int64, Int64) -> Int64) {
            self.body = body
            super.init(entry: RegisterEntry(
                integer: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                    Unmanaged<Adder>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                        DirectEntryTests.entered += 1
                        var registers = ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                        return registerResult(entry.body(registers.next(), registers.next())).integer
                    }
                },
                floating: { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in
                    DirectEntryTests.entered += 100  // never: the result is an integer
                    return 0
                }))
        }
    }

    /// The same for `(Float, Double) -> Double`: C reads the result in the floating register, which only
    /// the floating form returns it in (on aarch64 the integer form's would be read as garbage).
    final class Scaler: _DirectEntry, @unchecked Sendable {
        let body: @Sendable (Float, Double) -> Double
        init(_ body: @escaping @Sendable (Float, Double) -> Double) {
            self.body = body
            super.init(entry: RegisterEntry(
                integer: { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in
                    DirectEntryTests.entered += 100  // never: the result is floating
                    return 0
                },
                floating: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                    Unmanaged<Scaler>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                        DirectEntryTests.entered += 1
                        var registers = ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                        return registerResult(entry.body(registers.next(), registers.next())).sse
                    }
                }))
        }
    }

    @Test func aFloatingResultEntersTheFloatingForm() throws {
        DirectEntryTests.entered = 0
        let body: @Sendable (Float, Double) -> Double = { x, y in Double(x) * y }
        let closure = try CClosure(thunk: CallThunk.typed(body, entering: Scaler(body)))
        let scale = try closure.functionPointer(as: (@convention(c) (Float, Double) -> Double).self)
        #expect(scale(1.5, 4) == 6)
        #expect(scale(-0.25, 8) == -2)
        #expect(DirectEntryTests.entered == (RegisterPath.isAvailable ? 2 : 0))
    }

    @Test func theRegisterPathEntersTheClosuresOwnEntry() throws {
        DirectEntryTests.entered = 0
        let bias = Int64(7)
        let body: @Sendable (Int64, Int64) -> Int64 = { a, b in a &+ b &+ bias }
        let closure = try CClosure(thunk: CallThunk.typed(body, entering: Adder(body)))
        let add = try closure.functionPointer(as: (@convention(c) (Int64, Int64) -> Int64).self)
        #expect(add(1, 2) == 10)
        #expect(add(-8, 1) == 0)
        #expect(DirectEntryTests.entered == (RegisterPath.isAvailable ? 2 : 0))
    }

    /// A struct holding a double, stated as `double`: its Swift type does not say it travels in an SSE
    /// register, so an entry converting by type would read the wrong register. The entry is not used.
    struct Meters: CValue {
        var value: Double
        static var cType: CType { .double }
    }

    final class MetersEntry: _DirectEntry, @unchecked Sendable {
        init() {
            super.init(entry: RegisterEntry(
                integer: { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in
                    DirectEntryTests.entered += 1
                    return registerResult(Meters(value: -1)).integer
                },
                floating: { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in
                    DirectEntryTests.entered += 1
                    return registerResult(Meters(value: -1)).sse
                }))
        }
    }

    @Test func anEntryIsIgnoredWhereTypesCannotBeConvertedByType() throws {
        DirectEntryTests.entered = 0
        let closure = try CClosure(thunk: CallThunk.typed({ (m: Meters) -> Meters in Meters(value: m.value * 2) }, entering: MetersEntry()))
        let twice = try closure.functionPointer(erasedAs: (@convention(c) (Double) -> Double).self)
        #expect(twice(21) == 42)
        #expect(DirectEntryTests.entered == 0)
    }

    /// A signature that is not register-only (a struct by value) never enters in registers at all.
    final class Unused: _DirectEntry, @unchecked Sendable {
        init() {
            super.init(entry: RegisterEntry(
                integer: { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in
                    DirectEntryTests.entered += 1
                    return 0
                },
                floating: { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in
                    DirectEntryTests.entered += 1
                    return 0
                }))
        }
    }

    @Test func aSignatureOffTheRegisterPathRunsTheClosure() throws {
        DirectEntryTests.entered = 0
        let closure = try CClosure(thunk: CallThunk.typed({ (s: S8) -> Int32 in s.a &+ Int32(s.b) }, entering: Unused()))
        let sum = try closure.functionPointer(as: (@convention(c) (S8) -> Int32).self)
        #expect(sum(S8(a: 2, b: 3)) == 5)
        #expect(DirectEntryTests.entered == 0)
    }
}
