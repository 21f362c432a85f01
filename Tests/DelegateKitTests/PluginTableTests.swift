import DelegateKit
import DelegateKitFixtures
import Testing

@Suite struct PluginTableTests {
    func run(_ delegate: DynamicDelegate, _ values: [Int64]) -> (total: Double, called: UInt32) {
        var called: UInt32 = 0
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        let total = fx_plugin_run(table, nil, values, values.count, &called)
        return (total, called)
    }

    @Test func layoutMatchesTheCCompiler() {
        #expect(pluginProtocol.size == fx_plugin_size())
        #expect(pluginProtocol.field(named: "version")?.offset == fx_plugin_offset(0))
        #expect(pluginProtocol.methods.map(\.offset) == (1...4).map { fx_plugin_offset(Int32($0)) })
    }

    @Test func optionalSlotsAreNullUntilImplementedAndAfterRemoval() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.setField("version", Int32(2))
        #expect(delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.version == 2)

        // The required method is missing: C refuses to run, and validate() says why.
        #expect(run(delegate, [1, 2, 3]).total == -1)
        #expect(throws: DelegateError.missingRequiredMethods(["start"], protocol: "fx_plugin")) { try delegate.validate() }

        try delegate.implement("start") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        try delegate.validate()
        var result = run(delegate, [1, 2, 3])
        #expect(result.total == 6)
        #expect(result.called == 1)  // start only
        for method in ["transform", "weigh", "log"] { #expect(!delegate.responds(to: method)) }

        let logged = LogBox()
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value * 10 }
        try delegate.implement("weigh") { (_: UnsafeMutableRawPointer?, point: fx_point) -> Double in Double(point.x) + 1 }
        try delegate.implement("log") { (_: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) in
            logged.append(String(cString: message!))
        }
        for method in ["transform", "weigh", "log"] { #expect(delegate.responds(to: method)) }
        result = run(delegate, [1, 2, 3])
        #expect(result.total == 140)  // 10 * 1 + 20 * 2 + 30 * 3
        #expect(result.called == 15)  // start, transform, weigh and log
        #expect(logged.messages == ["processed 3 values"])

        // Removal is seen by C as NULL again.
        #expect(delegate.removeImplementation(for: "weigh"))
        #expect(delegate.removeImplementation(for: "log"))
        #expect(!delegate.removeImplementation(for: "log"))  // nothing left to remove
        #expect(delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.log == nil)
        result = run(delegate, [1, 2, 3])
        #expect(result.total == 60)
        #expect(result.called == 3)  // start and transform
        #expect(!delegate.responds(to: "weigh"))
        #expect(try delegate.field("version", as: Int32.self) == 2)
    }

    @Test func aCallThatLoadedTheReplacedPointerReachesTheNewImplementation() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("start") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
        // A C library may have loaded the old pointer just before the replacement.
        let stale = delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.transform!
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 2 }
        #expect(run(delegate, [10]).total == 12)
        // The old code is retired, not freed, and never runs its closure once replaced: it passes the call on.
        #expect(stale(nil, 10) == 12)
        // The slot reuses that code for its next implementation: a stale call still gets what the slot
        // holds now, whether the slot holds that code again or, under an override, something else.
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 3 }
        #expect(run(delegate, [10]).total == 13)
        #expect(stale(nil, 10) == 13)
        let doubling = try delegate.override("transform") {
            (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            next(context, value) * 2
        }
        #expect(run(delegate, [10]).total == 26)
        #expect(stale(nil, 10) == 26)
        doubling.remove()
        #expect(stale(nil, 10) == 13)
        #expect(delegate.removeImplementation(for: "transform"))
        #expect(stale(nil, 10) == 0)  // an empty slot: the default value
    }

    @Test func typedCallableOfTheCurrentImplementation() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        #expect(try delegate.implementation(for: "transform", as: ((UnsafeMutableRawPointer?, Int64) -> Int64).self) == nil)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value * 3 }
        let transform = try #require(try delegate.implementation(for: "transform", as: ((UnsafeMutableRawPointer?, Int64) -> Int64).self))
        #expect(transform(nil, 14) == 42)

        let log = LogBox()
        try delegate.implement("log") { (_: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) in
            log.append(String(cString: message!))
        }
        let logFunction = try #require(try delegate.implementation(for: "log", as: ((UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void).self))
        "hello".withCString { logFunction(nil, $0) }
        #expect(log.messages == ["hello"])

        try delegate.implement("weigh") { (_: UnsafeMutableRawPointer?, point: fx_point) -> Double in Double(point.x * point.y) }
        let weigh = try #require(try delegate.implementation(for: "weigh", as: ((UnsafeMutableRawPointer?, fx_point) -> Double).self))
        #expect(weigh(nil, fx_point(x: 1.5, y: 4)) == 6)

        #expect(throws: DelegateError.signatureMismatch(
            method: "transform", protocol: "fx_plugin",
            expected: CSignature(.int64, [.pointer, .int64]), actual: CSignature(.int32, [.pointer, .int64]))
        ) {
            _ = try delegate.implementation(for: "transform", as: ((UnsafeMutableRawPointer?, Int64) -> Int32).self)
        }
    }

    /// A method remembers which prepared signature it accepted last, shared by copies of its descriptor:
    /// the same closure types are accepted again on a new delegate, two spellings it accepts take turns,
    /// and a signature it refuses is refused each time, whatever was accepted before.
    @Test func signaturesAcceptedBeforeAreAcceptedAgainAndNoOthers() throws {
        func described(transformTaking argument: CType) -> ProtocolDescriptor {
            ProtocolDescriptor(name: "fx_plugin", members: pluginProtocol.members.map { member in
                guard case .method(let method) = member, method.name == "transform" else { return member }
                return .method(MethodDescriptor(name: "transform", signature: CSignature(.int64, [.pointer, argument])))
            })
        }
        // `size_t` takes `int64_t` and `uint64_t` closures alike: two prepared signatures it accepts.
        let sized = described(transformTaking: .size)
        let copy = sized
        let refused = DelegateError.signatureMismatch(
            method: "transform", protocol: "fx_plugin",
            expected: CSignature(.int64, [.pointer, .size]), actual: CSignature(.int64, [.pointer, .int32]))
        func transform(_ delegate: DynamicDelegate, _ value: Int64) -> Int64 {
            var called = false
            return fx_plugin_transform(delegate.table.assumingMemoryBound(to: fx_plugin.self), nil, value, &called)
        }
        for round in 0..<3 {
            let delegate = DynamicDelegate(protocol: round == 0 ? sized : copy)
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
            #expect(transform(delegate, 1) == 2)
            #expect(throws: refused) {
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int32) -> Int64 in Int64(value) }
            }
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: UInt64) -> Int64 in Int64(value) * 3 }
            #expect(transform(delegate, 5) == 15)
            #expect(throws: refused) {
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int32) -> Int64 in Int64(value) }
            }
            #expect(transform(delegate, 5) == 15)  // the refused closure changed nothing
        }
        // What a descriptor accepted is no part of its value.
        #expect(sized == described(transformTaking: .size))
        #expect(sized.hashValue == described(transformTaking: .size).hashValue)
        #expect(sized != described(transformTaking: .int64))
    }

    @Test func dynamicImplementationReadsArgumentsAtRunTime() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("start", dynamic: { _ in })  // returns 0: results start zeroed
        try delegate.implement("transform", dynamic: { invocation in
            invocation.setReturnValue(invocation.argument(1, as: Int64.self) - 1)
        })
        try delegate.implement("weigh", dynamic: { invocation in
            let point = invocation.argument(1, as: fx_point.self)
            invocation.setReturnValue(Double(point.y) / 2)
        })
        // weights are (value - 1) / 2 for values 3 and 5: 2 * 1 + 4 * 2
        #expect(run(delegate, [3, 5]).total == 10)
    }
}
