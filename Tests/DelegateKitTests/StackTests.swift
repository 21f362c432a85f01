import DelegateKit
import DelegateKitFixtures
import Testing

/// Keys, stacks and calls to the implementation below (REKit, A2DynamicDelegate), seen from C.
@Suite struct StackTests {
    @Test func newestOnTopAndNextReachesTheOneBelow() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        let a = try d.implement("transform", key: "base") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 1 }
        try d.override("transform", key: "plus5") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            next(c, v) + 5
        }
        try d.override("transform", key: "negate") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            -next(c, v)
        }
        #expect(transform(d, 10) == -16)  // -((10 + 1) + 5)
        #expect(d.hasImplementation(for: "transform", key: "plus5"))

        // Re-using a key removes the old entry and puts the new one on top.
        try d.override("transform", key: "plus5") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            next(c, v) + 5
        }
        #expect(transform(d, 10) == -6)  // (-(10 + 1)) + 5

        #expect(d.removeImplementation(for: "transform", key: "negate"))
        #expect(!d.removeImplementation(for: "transform", key: "negate"))
        #expect(transform(d, 10) == 16)
        a.remove()  // same as removing by key
        #expect(!a.isActive)
        #expect(!d.hasImplementation(for: "transform", key: "base"))
        // Nothing below "plus5" now: next returns the default value, 0.
        #expect(transform(d, 10) == 5)
        #expect(d.responds(to: "transform"))
    }

    @Test func implementWithoutKeyReplacesOverrideWithoutKeyAdds() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 1 }
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 2 }
        #expect(transform(d, 0) == 2)  // replaced, not stacked
        for _ in 0..<3 {
            try d.override("transform") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in next(c, v) * 10 }
        }
        #expect(transform(d, 0) == 2000)  // three layers
        #expect(d.removeImplementation(for: "transform"))  // the whole stack
        #expect(transform(d, 0) == nil)
        #expect(!d.responds(to: "transform"))
    }

    @Test func registrationDeinitRemovesNothing() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        do {
            _ = try d.implement("transform", key: 7) { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v * 7 }
        }
        #expect(transform(d, 3) == 21)
        #expect(d.hasImplementation(for: "transform", key: 7))
        #expect(!d.hasImplementation(for: "transform", key: "7"))  // keys are any Hashable, compared by type too
    }

    /// Keys are equal as `AnyHashable`s are: by value within one type, and across the types it equates
    /// (integers of two widths, a subclass and its Hashable base class); an override's own keys equal no
    /// user's key, nor each other.
    @Test func keysCompareAsAnyHashableDoes() throws {
        class Name: Hashable, @unchecked Sendable {  // immutable
            let text: String
            init(_ text: String) { self.text = text }
            static func == (a: Name, b: Name) -> Bool { a.text == b.text }
            func hash(into hasher: inout Hasher) { hasher.combine(text) }
        }
        final class Nickname: Name, @unchecked Sendable {}

        let d = DynamicDelegate(protocol: pluginProtocol)
        func put(_ key: some Hashable & Sendable, _ value: Int64) throws {
            try d.implement("transform", key: key) { (_: UnsafeMutableRawPointer?, _: Int64) -> Int64 in value }
        }
        try put("text", 1)
        try put(7, 2)
        try put(Name("ann"), 3)
        for _ in 0..<2 {
            try d.override("transform") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in next(c, v) + 10 }
        }
        #expect(transform(d, 0) == 23)  // two overrides over "ann": neither replaced the other, nor any key

        #expect(d.hasImplementation(for: "transform", key: "text"))
        #expect(!d.hasImplementation(for: "transform", key: Substring("text")))  // AnyHashable tells these apart
        #expect(d.hasImplementation(for: "transform", key: Int8(7)))
        #expect(d.hasImplementation(for: "transform", key: Name("ann")))
        #expect(d.hasImplementation(for: "transform", key: Nickname("ann")))
        #expect(!d.hasImplementation(for: "transform", key: Name("bob")))
        #expect(!d.hasImplementation(for: "transform", key: 8))

        // Replacing by a key of another type that is equal: one entry for "ann", now on top of the overrides' stack.
        try put(Nickname("ann"), 4)
        #expect(transform(d, 0) == 4)
        #expect(d.removeImplementation(for: "transform", key: Name("ann")))
        #expect(!d.hasImplementation(for: "transform", key: Nickname("ann")))
        #expect(d.removeImplementation(for: "transform", key: UInt64(7)))
        #expect(d.removeImplementation(for: "transform", key: "text"))
        #expect(transform(d, 0) == 20)  // the two overrides, nothing below them
    }

    @Test func implementWithoutAKeyReplacesOnlyItsOwn() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        let first = try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 1 }
        try d.override("transform", key: "double") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            next(c, v) * 2
        }
        #expect(transform(d, 10) == 22)
        // The default key's entry is replaced (the new one on top); the keyed layer stays, below it now.
        let second = try d.implement("transform", key: nil) { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 100 }
        #expect(transform(d, 10) == 110)
        #expect(first.isActive && second.isActive)  // a registration names its method and key, not one closure
        #expect(d.hasImplementation(for: "transform", key: "double"))
        first.remove()
        #expect(!second.isActive)
        #expect(transform(d, 10) == 0)  // the layer's next finds nothing below it
        #expect(d.hasImplementation(for: "transform", key: "double"))
        // A key of the user's never equals the default one, whatever it is.
        try d.implement("transform", key: 0) { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v - 1 }
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 1 }
        try d.implement("transform", key: "") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 2 }
        #expect(transform(d, 10) == 12)
        #expect(d.removeImplementation(for: "transform", key: ""))
        #expect(transform(d, 10) == 11)
        #expect(d.removeImplementation(for: "transform", key: 0))
        #expect(transform(d, 10) == 11)
    }

    @Test func nextKnowsWhetherAnythingIsBelow() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        let seen = Counter()
        try d.override("transform") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            if next.isAvailable { seen.increment() }
            return next.isAvailable ? next(c, v) : -1
        }
        #expect(transform(d, 5) == -1)
        try d.implement("transform", key: "below") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v }
        // The new implementation went on top, so move the override back above it.
        try d.override("transform", key: "top") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            next.isAvailable ? next(c, v) + 100 : -1
        }
        #expect(transform(d, 5) == 105)
        #expect(seen.value == 0)
    }

    @Test func onceServesExactlyOneCall() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform", key: "base") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v }
        let registration = try d.implement("transform", key: "first", once: true) { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            v + 1000
        }
        #expect(registration.isActive)
        #expect(transform(d, 1) == 1001)
        #expect(transform(d, 1) == 1)
        #expect(transform(d, 1) == 1)
        #expect(!registration.isActive)

        // A once implementation alone: after its call the slot is empty again.
        let e = DynamicDelegate(protocol: pluginProtocol)
        try e.implement("transform", once: true) { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v * 3 }
        #expect(transform(e, 2) == 6)
        #expect(transform(e, 2) == nil)
        #expect(!e.responds(to: "transform"))
    }

    @Test func onceUnderFourCThreadsRunsExactlyOnce() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform", key: "base") { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in i * 1000 }
        let runs = Counter()
        try d.implement("transform", key: "once", once: true) { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in
            runs.increment()
            return i * 1000 + 1
        }
        let hammer = try #require(fx_hammer_start(d.table.assumingMemoryBound(to: fx_plugin.self), 4, 20_000, 2))
        var wrong: Int64 = 0, nulls: Int64 = 0
        #expect(fx_hammer_join(hammer, &wrong, &nulls) == 80_000)
        #expect(wrong == 0 && nulls == 0)
        #expect(runs.value == 1)
    }

    @Test func aClosureRemovesItselfWhileRunning() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform", key: "base") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v }
        let calls = Counter()
        try d.override("transform", key: "three times") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            calls.increment()
            if calls.value == 3 { next.removeCurrentImplementation() }
            return next(c, v) + 50  // still runs to the end after removing itself
        }
        #expect((0..<5).map { transform(d, Int64($0)) } == [50, 51, 52, 3, 4])
        #expect(calls.value == 3)
        #expect(!d.hasImplementation(for: "transform", key: "three times"))
    }

    @Test func aPlainImplementationRemovesItselfByKey() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform", key: "base") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v }
        // Unowned: the delegate owns the closure. Removing takes the lock, which no call holds.
        try d.implement("transform", key: "self-removing") { [unowned d] (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            d.removeImplementation(for: "transform", key: "self-removing")
            return v + 100
        }
        #expect(transform(d, 1) == 101)
        #expect(transform(d, 1) == 1)
    }

    @Test func layersOfOtherSwiftTypesAndOnceLayersAreReachedToo() throws {
        // `next` calls a layer of the very same Swift types directly and lays the arguments out for
        // libffi otherwise; both must give the same results, in order.
        let d = DynamicDelegate(protocol: pluginProtocol)
        let order = LogBox()
        try d.implement("transform", key: "base") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            order.append("base")
            return v
        }
        // Other Swift types for the same C signature (OpaquePointer for void *): reached through libffi's form.
        try d.override("transform", key: "opaque") { (next: Next<OpaquePointer?, Int64, Int64>, c: OpaquePointer?, v: Int64) -> Int64 in
            order.append("opaque")
            return next(c, v) + 1
        }
        try d.override("transform", key: "once", once: true) { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            order.append("once")
            return next(c, v) * 10
        }
        try d.override("transform", key: "top") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            order.append("top")
            return next(c, v) + 100
        }
        #expect(transform(d, 5) == 160)  // ((5 + 1) * 10) + 100
        #expect(transform(d, 5) == 106)  // the once layer is spent: (5 + 1) + 100
        #expect(order.messages == ["top", "once", "opaque", "base", "top", "opaque", "base"])
    }

    @Test func voidMethodsStackToo() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        let log = LogBox()
        try d.implement("start") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        try d.implement("log") { (_: UnsafeMutableRawPointer?, m: UnsafePointer<CChar>?) in log.append("base: " + String(cString: m!)) }
        try d.override("log") { (next: Next<UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Void>, c: UnsafeMutableRawPointer?, m: UnsafePointer<CChar>?) in
            log.append("before")
            next(c, m)
            log.append("after")
        }
        var called: UInt32 = 0
        _ = fx_plugin_run(d.table.assumingMemoryBound(to: fx_plugin.self), nil, [1], 1, &called)
        #expect(log.messages == ["before", "base: processed 1 values", "after"])
    }

    @Test func overridingChangesArgumentsPassedBelow() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("weigh") { (_: UnsafeMutableRawPointer?, p: fx_point) -> Double in Double(p.x * 10 + p.y) }
        try d.override("weigh") { (next: Next<UnsafeMutableRawPointer?, fx_point, Double>, c: UnsafeMutableRawPointer?, p: fx_point) -> Double in
            next(c, fx_point(x: p.y, y: p.x)) + 0.5  // swap the struct's fields on the way down
        }
        try d.implement("start") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        var called: UInt32 = 0
        // point = (index, value): weights (3*10 + 0) + 0.5 and (4*10 + 1) + 0.5 for values 3, 4
        let total = fx_plugin_run(d.table.assumingMemoryBound(to: fx_plugin.self), nil, [3, 4], 2, &called)
        #expect(total == 3 * 30.5 + 4 * 41.5)
    }
}
