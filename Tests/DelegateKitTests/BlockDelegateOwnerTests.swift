import DelegateKit
import DelegateKitFixtures
import Testing

/// A block delegate over the fixture plugin whose closures use the object through their first argument.
private final class Scaling: BlockDelegate {
    var factor: Int64 = 10
    var messages: [String] = []
    var distinctMessages: Set<String> = []

    init() throws { try super.init(for: fx_plugin.self) }

    /// What C's `fx_plugin_transform` answers for `value`, and whether the slot was set.
    func transform(_ value: Int64) -> (Int64, Bool) {
        var called = false
        let result = fx_plugin_transform(table.assumingMemoryBound(to: fx_plugin.self), nil, value, &called)
        return (result, called)
    }
}

/// The owner-passing `implement` takes `key:` and `once:` and returns a `Registration`, as every other
/// `implement` does.
@Suite struct BlockDelegateOwnerTests {
    @Test func keysStackAndRegistrationsRemoveWhatTheyRegistered() throws {
        let plugin = try Scaling()
        let scaled = try plugin.implement("transform", key: "scale") { (owner: Scaling, _: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            value * owner.factor
        }
        #expect(plugin.dynamicDelegate.hasImplementation(for: "transform", key: "scale"))
        #expect(scaled.isActive)
        #expect(plugin.transform(3) == (30, true))
        plugin.factor = 100  // read through the owner at each call, not captured
        #expect(plugin.transform(3) == (300, true))

        // Another key goes on top; removing it uncovers the first again.
        let negated = try plugin.implement("transform", key: "negate") { (_: Scaling, _: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            -value
        }
        #expect(plugin.transform(3) == (-3, true))
        negated.remove()
        #expect(!negated.isActive)
        #expect(plugin.transform(3) == (300, true))

        // The same key replaces.
        try plugin.implement("transform", key: "scale") { (owner: Scaling, _: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            value + owner.factor
        }
        #expect(plugin.transform(3) == (103, true))
        scaled.remove()
        #expect(plugin.transform(3) == (3, false))  // the slot is NULL again
    }

    @Test func onceServesOneCall() throws {
        let plugin = try Scaling()
        let registration = try plugin.implement("transform", once: true) { (owner: Scaling, _: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            value * owner.factor
        }
        #expect(plugin.transform(4) == (40, true))
        #expect(plugin.transform(4) == (4, false))
        #expect(!registration.isActive)
    }

    @Test func voidMethodsTakeKeysToo() throws {
        let plugin = try Scaling()
        try plugin.implement("start") { (_: Scaling, _: UnsafeMutableRawPointer?) -> Int32 in 0 }
        let registration = try plugin.implement("log", key: 7) { (owner: Scaling, _: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) in
            owner.messages.append(String(cString: message!))
        }
        #expect(registration.isActive)
        #expect(plugin.dynamicDelegate.hasImplementation(for: "log", key: 7))
        var called: UInt32 = 0
        let values: [Int64] = [1, 2]
        #expect(fx_plugin_run(plugin.table.assumingMemoryBound(to: fx_plugin.self), nil, values, values.count, &called) == 3)
        #expect(plugin.messages == ["processed 2 values"])
        registration.remove()
        #expect(!plugin.dynamicDelegate.responds(to: "log"))
        _ = fx_plugin_run(plugin.table.assumingMemoryBound(to: fx_plugin.self), nil, values, values.count, &called)
        #expect(called & UInt32(FX_CALLED_LOG) == 0)
        #expect(plugin.messages.count == 1)
    }

    /// One form takes closures of every result type: a value C cannot receive is discarded, as Swift
    /// discards a one-expression closure's where `Void` is expected, so a method that returns a value
    /// refuses the closure naming `void`, and a `void` method takes it.
    @Test func aValueCCannotReceiveIsDiscarded() throws {
        let plugin = try Scaling()
        let error = #expect(throws: DelegateError.self) {
            try plugin.implement("transform") { (_: Scaling, _: UnsafeMutableRawPointer?, value: Int64) in "\(value)" }
        }
        #expect(error == .signatureMismatch(
            method: "transform", protocol: "fx_plugin", expected: CSignature(.int64, [.pointer, .int64]),
            actual: CSignature(.void, [.pointer, .int64])))
        #expect(plugin.transform(3) == (3, false))
        try plugin.implement("start") { (_: Scaling, _: UnsafeMutableRawPointer?) -> Int32 in 0 }
        try plugin.implement("log") { (owner: Scaling, _: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) in
            owner.distinctMessages.insert(String(cString: message!))  // (inserted:memberAfterInsert:), discarded
        }
        var called: UInt32 = 0
        let values: [Int64] = [1, 2]
        #expect(fx_plugin_run(plugin.table.assumingMemoryBound(to: fx_plugin.self), nil, values, values.count, &called) == 3)
        #expect(called & UInt32(FX_CALLED_LOG) != 0)
        #expect(plugin.distinctMessages == ["processed 2 values"])
    }
}
