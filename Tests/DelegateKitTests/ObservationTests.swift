import DelegateKit
import DelegateKitFixtures
import Testing

/// Observers of calls (KVO with closures, multicast delegates), driven from C.
@Suite struct ObservationTests {
    @Test func beforeAndAfterInRegistrationOrderWithoutChangingTheResult() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        let log = LogBox()
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in
            log.append("implementation \(v)")
            return v * 2
        }
        let t1 = try d.observe("transform", .before) { (_: UnsafeMutableRawPointer?, v: Int64) in log.append("before#1 \(v)") }
        let t2 = try d.observe("transform", .after) { (_: UnsafeMutableRawPointer?, v: Int64) in log.append("after#1 \(v)") }
        let t3 = try d.observe("transform", .before) { (_: UnsafeMutableRawPointer?, v: Int64) in log.append("before#2 \(v)") }
        let t4 = try d.observeResult("transform") { (result: Int64, _: UnsafeMutableRawPointer?, v: Int64) in
            log.append("after#2 \(v) -> \(result)")
        }
        #expect(transform(d, 21) == 42)
        #expect(log.messages == ["before#1 21", "before#2 21", "implementation 21", "after#1 21", "after#2 21 -> 42"])
        withExtendedLifetime([t1, t2, t3, t4]) {}
    }

    @Test func cancelAndDeinitStopObservers() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v }
        let seen = Counter()
        let token = try d.observe("transform", .after) { (_: UnsafeMutableRawPointer?, _: Int64) in seen.increment() }
        _ = transform(d, 1)
        token.cancel()
        #expect(token.isCancelled)
        _ = transform(d, 1)
        #expect(seen.value == 1)

        do {
            let scoped = try d.observe("transform", .before) { (_: UnsafeMutableRawPointer?, _: Int64) in seen.increment() }
            _ = transform(d, 1)
            withExtendedLifetime(scoped) {}
        }
        _ = transform(d, 1)  // the token went away with its scope
        #expect(seen.value == 2)
    }

    @Test func observerTiedToAnOwnerStopsWhenTheOwnerGoes() throws {
        final class Owner {}
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v }
        let seen = Counter()
        var owner: Owner? = Owner()
        weak let weakOwner = owner
        let token = try d.observe("transform", .after, owner: owner) { (_: UnsafeMutableRawPointer?, _: Int64) in seen.increment() }
        _ = transform(d, 1)
        owner = nil
        #expect(weakOwner == nil)  // the observation does not keep its owner alive
        _ = transform(d, 1)
        _ = transform(d, 1)
        #expect(seen.value == 1)
        #expect(token.isCancelled)
    }

    @Test func observeAllTracesEveryMethodWithDecodedValues() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.implement("start") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        try d.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in -v }
        try d.implement("log") { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) in }
        let calls = LogBox()
        let all = d.observeAll { call in calls.append(call.description) }
        var called: UInt32 = 0
        let context = UnsafeMutableRawPointer(bitPattern: 0xBEEF)
        _ = fx_plugin_run(d.table.assumingMemoryBound(to: fx_plugin.self), context, [7, 8], 2, &called)
        let messages = calls.messages
        #expect(messages.count == 4)
        #expect(messages[0] == "start(0xbeef) -> 0")
        #expect(messages[1] == "transform(0xbeef, 7) -> -7")
        #expect(messages[2] == "transform(0xbeef, 8) -> -8")
        #expect(messages[3].hasPrefix("log(0xbeef, 0x"))
        // The unimplemented "weigh" stayed NULL: observing does not make C call an empty slot.
        #expect(called == 1 | 2 | 4)
        all.cancel()
    }

    @Test func observingAnEmptySlotLetsTheCallThroughBelow() throws {
        // Under .stable the empty slot is called; observers see it and C gets the default value.
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.setPolicy(.stable, for: "transform")
        let seen = LogBox()
        let token = try d.observeResult("transform") { (result: Int64, _: UnsafeMutableRawPointer?, v: Int64) in
            seen.append("\(v) -> \(result)")
        }
        #expect(transform(d, 9) == 0)
        #expect(seen.messages == ["9 -> 0"])
        withExtendedLifetime(token) {}
    }

    @Test func observerArgumentTypesAreChecked() throws {
        let d = DynamicDelegate(protocol: pluginProtocol)
        let error = #expect(throws: DelegateError.self) {
            _ = try d.observe("transform", .after) { (_: UnsafeMutableRawPointer?, _: Int32) in }
        }
        #expect(error == .signatureMismatch(
            method: "transform", protocol: "fx_plugin",
            expected: CSignature(.int64, [.pointer, .int64]), actual: CSignature(.int64, [.pointer, .int32])))
    }
}

/// Forwarding chains (A2DynamicDelegate's realDelegate, responder chains).
@Suite struct ForwardingTests {
    @Test func unimplementedSlotsGoDownTheChain() throws {
        let top = DynamicDelegate(protocol: pluginProtocol)
        let middle = DynamicDelegate(protocol: pluginProtocol)
        let bottom = DynamicDelegate(protocol: pluginProtocol)
        try top.setForwardingTarget(.delegate(middle))
        try middle.setForwardingTarget(.delegate(bottom))
        #expect(!top.responds(to: "transform"))
        #expect(transform(top, 1) == nil)  // NULL all the way down

        try bottom.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 1 }
        #expect(top.responds(to: "transform"))  // the chain is followed as it changes
        #expect(transform(top, 1) == 2)
        try middle.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v + 10 }
        #expect(transform(top, 1) == 11)  // the first delegate down the chain that implements it
        try top.override("transform") { (next: TransformNext, c: UnsafeMutableRawPointer?, v: Int64) -> Int64 in next(c, v) * 100 }
        #expect(transform(top, 1) == 1100)  // next reaches the forwarding target below an empty stack

        middle.removeImplementation(for: "transform")
        bottom.removeImplementation(for: "transform")
        #expect(transform(top, 1) == 0)  // the override remains; below it, the default value
        top.removeImplementation(for: "transform")
        #expect(transform(top, 1) == nil)
        #expect(!top.responds(to: "transform"))
    }

    @Test func rawTableTarget() throws {
        let real = DynamicDelegate(protocol: pluginProtocol)
        try real.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v * 3 }
        let d = DynamicDelegate(protocol: pluginProtocol)
        try d.setForwardingTarget(.table(UnsafeRawPointer(real.table), pluginProtocol))
        #expect(d.responds(to: "transform"))
        #expect(transform(d, 5) == 15)
        try d.setForwardingTarget(nil)
        #expect(transform(d, 5) == nil)
    }

    @Test func loopsAreRefusedWhenSet() throws {
        let a = DynamicDelegate(protocol: pluginProtocol)
        let b = DynamicDelegate(protocol: pluginProtocol)
        let c = DynamicDelegate(protocol: pluginProtocol)
        try a.setForwardingTarget(.delegate(b))
        try b.setForwardingTarget(.delegate(c))
        let error = #expect(throws: DelegateError.self) { try c.setForwardingTarget(.delegate(a)) }
        #expect(error == .forwardingLoop(["fx_plugin", "fx_plugin", "fx_plugin", "fx_plugin"]))
        #expect(error?.description == "forwarding would loop: fx_plugin -> fx_plugin -> fx_plugin -> fx_plugin")
        #expect(throws: DelegateError.self) { try a.setForwardingTarget(.delegate(a)) }
        #expect(throws: DelegateError.self) { try c.setForwardingTarget(.table(UnsafeRawPointer(b.table), pluginProtocol)) }
        #expect(!c.responds(to: "transform"))  // refused changes change nothing: c forwards nowhere
        // An object that is its own delegate (BlocksKit's recursion) cannot even be set up.
        try a.implement("transform") { (_: UnsafeMutableRawPointer?, v: Int64) -> Int64 in v }
        #expect(transform(a, 4) == 4)
    }

    @Test func targetWithAnotherSignatureIsRefused() throws {
        let other = ProtocolDescriptor(name: "other", methods: [
            MethodDescriptor(name: "transform", signature: CSignature(.int32, [.pointer, .int32])),
        ])
        let d = DynamicDelegate(protocol: pluginProtocol)
        let error = #expect(throws: DelegateError.self) {
            try d.setForwardingTarget(.delegate(DynamicDelegate(protocol: other)))
        }
        #expect(error == .signatureMismatch(
            method: "transform", protocol: "other",
            expected: CSignature(.int64, [.pointer, .int64]), actual: CSignature(.int32, [.pointer, .int32])))
    }
}

