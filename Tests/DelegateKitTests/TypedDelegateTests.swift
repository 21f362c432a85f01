import DelegateKitCSQLite
import Glibc
import DelegateKit
import DelegateKitExamples
import DelegateKitFixtures
import Synchronization
import Testing

/// The C signature matches (`int64_t (void *, int64_t)`), the Swift types do not.
final class MistypedPlugin: BlockDelegate {
    @Slot(\fx_plugin.transform) var onTransform: ((OpaquePointer?, Int64) -> Int64)?
    init() throws { try super.init(for: fx_plugin.self) }
}

/// A key path into another struct than the delegate's.
final class CrossedPlugin: BlockDelegate {
    @Slot(\sqlite3_io_methods.xClose) var onClose: ((UnsafeMutablePointer<sqlite3_file>?) -> Int32)?
    init() throws { try super.init(for: fx_plugin.self) }
}

@Suite struct TypedDelegateTests {
    @Test func descriptorsFromImportedStructsEqualTheOnesWrittenFromTheHeader() {
        for (reflected, written) in [
            (ProtocolDescriptor(for: sqlite3_io_methods.self), SQLiteDescriptors.ioMethods),
            (ProtocolDescriptor(for: sqlite3_vfs.self), SQLiteDescriptors.vfs),
        ] {
            #expect(reflected.name == written.name)
            #expect(reflected.methods == written.methods)
            #expect(reflected.fields.map(\.name) == written.fields.map(\.name))
            #expect(reflected.fields.map(\.offset) == written.fields.map(\.offset))
            #expect(reflected.size == written.size)
        }
        #expect(ProtocolDescriptor(for: sqlite3_io_methods.self).size == MemoryLayout<sqlite3_io_methods>.size)
    }

    @Test func pluginLayoutMatchesTheCCompilerIncludingAStructByValue() throws {
        let plugin = ProtocolDescriptor(for: fx_plugin.self)
        try plugin.validate()
        #expect(plugin.size == fx_plugin_size())
        #expect(plugin.field(named: "version")?.offset == fx_plugin_offset(0))
        #expect(plugin.methods.map(\.name) == ["start", "transform", "log", "weigh"])
        #expect(plugin.methods.map(\.offset) == (1...4).map { fx_plugin_offset(Int32($0)) })
        // `weigh` takes an fx_point by value: its C type comes from fx_point's CValue conformance (FixtureStructs).
        #expect(plugin.methods.map(\.signature) == [
            CSignature(.int32, [.pointer]), CSignature(.int64, [.pointer, .int64]), CSignature(.void, [.pointer, .pointer]),
            CSignature(.double, [.pointer, fx_point.cType]),
        ])
    }

    @Test func aMemberTakingAStructByValueServesC() throws {
        let plugin = TypedDelegate(for: fx_plugin.self)
        try plugin.implement(\.start) { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        // The library passes the point (index, value): weight index + 1.
        try plugin.implement(\.weigh) { (_: UnsafeMutableRawPointer?, point: fx_point) -> Double in Double(point.x) + 1 }
        var called: UInt32 = 0
        let values: [Int64] = [1, 2, 3]
        #expect(fx_plugin_run(plugin.typedTable, nil, values, values.count, &called) == 14)  // 1·1 + 2·2 + 3·3
        #expect(called == UInt32(FX_CALLED_START | FX_CALLED_WEIGH))
    }

    @Test func aMemberReturningAStructByValueServesC() throws {
        let geometry = TypedDelegate(for: fx_geometry.self)
        #expect(geometry.descriptor.method(named: "midpoint")?.signature == CSignature(fx_point.cType, [fx_point.cType, fx_point.cType]))
        try geometry.implement(\.midpoint) { (a: fx_point, b: fx_point) -> fx_point in
            fx_point(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2)
        }
        let middle = fx_geometry_midpoint(geometry.typedTable, fx_point(x: 1, y: -2), fx_point(x: 5, y: 8))
        #expect(middle.x == 3 && middle.y == 3)
    }

    @Test func aMemberTakingAStructThatIsNotACValueNamesTheTypeToConform() {
        let geometry = TypedDelegate(for: fx_geometry.self)
        let error = #expect(throws: DelegateError.self) { _ = try geometry.methodName(of: \.area) }
        #expect(error?.description == "member 'area' of fx_geometry cannot be used: " + extentRefusal)
        // Its neighbour, whose struct does conform, is unaffected.
        #expect(throws: Never.self) { try geometry.implement(\.midpoint) { (a: fx_point, _: fx_point) -> fx_point in a } }
    }

    @Test func aSwiftClosureMemberIsNamedInsteadOfTheLayout() {
        let expected = DelegateError.invalidMember(
            "run", protocol: "ClosureTable",
            reason: "its type `Swift.Optional<(Swift.Int32) -> Swift.Int32>` is a Swift closure, not a C function pointer; "
                + "declare it `@convention(c)` for C to call it")
        #expect(throws: expected) { try ProtocolDescriptor(for: ClosureTable.self).validate() }
        #expect(expected.description.hasPrefix("member 'run' of ClosureTable cannot be used: its type"))
    }

    @Test func keyPathImplementationsServeTheFixtureLibrary() throws {
        let plugin = TypedDelegate(for: fx_plugin.self)
        plugin.typedTable.pointee.version = 2
        try plugin.implement(\.start) { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        try plugin.implement(\.transform) { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value * 3 }
        #expect(try plugin.field("version", as: Int32.self) == 2)
        #expect(plugin.responds(to: try plugin.methodName(of: \.transform)))
        #expect(plugin.responds(to: "log") == false)

        var called: UInt32 = 0
        let values: [Int64] = [1, 2, 3, 4]
        let total = fx_plugin_run(plugin.typedTable, nil, values, values.count, &called)
        #expect(total == 30)
        #expect(called == UInt32(FX_CALLED_START | FX_CALLED_TRANSFORM))
    }

    #if compiler(>=6.3)
    /// A key path literal gives the closure its types: none written, several statements, a literal
    /// result, called by C (`fx_plugin_run`); and pthread's start routine ending in `return nil`, started
    /// by glibc's `pthread_create`.
    @Test func aKeyPathLiteralGivesTheClosureItsTypes() throws {
        let plugin = TypedDelegate(for: fx_plugin.self)
        try plugin.implement(\.start) { _ in
            _ = 0
            return 0
        }
        try plugin.implement(\.transform) { _, value in value * 3 }
        var called: UInt32 = 0
        let values: [Int64] = [1, 2, 3, 4]
        #expect(fx_plugin_run(plugin.typedTable, nil, values, values.count, &called) == 30)
        #expect(called == UInt32(FX_CALLED_START | FX_CALLED_TRANSFORM))

        struct Threads { var start: (@convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?)? }
        let threads = TypedDelegate(for: Threads.self)
        let ran = Mutex(false)
        try threads.implement(\.start) { _ in
            ran.withLock { $0 = true }
            return nil
        }
        var thread = pthread_t()
        #expect(pthread_create(&thread, nil, threads.typedTable.pointee.start!, nil) == 0)
        var result: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(bitPattern: 1)
        #expect(pthread_join(thread, &result) == 0)
        #expect(ran.withLock { $0 } && result == nil)
    }

    /// A function that is not a key path literal reads no member: refused, naming the closure's type.
    @Test func aFunctionThatReadsNoMemberIsRefused() {
        let plugin = TypedDelegate(for: fx_plugin.self)
        let error = #expect(throws: DelegateError.self) {
            try plugin.implement({ (_: fx_plugin) -> ((UnsafeMutableRawPointer?) -> Int32)? in nil }) { _ in 0 }
        }
        #expect(error?.description.contains("reads none of the struct's function-pointer members") == true, "\(String(describing: error))")
        #expect(plugin.typedTable.pointee.start == nil)
    }
    #endif

    @Test func aClosureOfAnotherSwiftTypeIsRefusedEvenWhenItsCSignatureFits() throws {
        let plugin = TypedDelegate(for: fx_plugin.self)
        #expect(throws: DelegateError.typeMismatch(
            member: "transform", protocol: "fx_plugin",
            expected: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.Int64",
            actual: "@convention(c) (Swift.Optional<Swift.OpaquePointer>, Swift.Int64) -> Swift.Int64")) {
            try plugin.implement(\.transform) { (_: OpaquePointer?, value: Int64) -> Int64 in value }
        }
        #expect(throws: DelegateError.typeMismatch(
            member: "log", protocol: "fx_plugin",
            expected: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Optional<Swift.UnsafePointer<Swift.Int8>>) -> ()",
            actual: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Optional<Swift.UnsafePointer<Swift.Int8>>) -> Swift.Int32")) {
            try plugin.implement(\.log) { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?) -> Int32 in 0 }
        }
        // Nothing was installed: C still sees NULL.
        #expect(plugin.typedTable.pointee.transform == nil)
        #expect(plugin.typedTable.pointee.log == nil)
        #expect(DelegateError.typeMismatch(member: "m", protocol: "p", expected: "A", actual: "B").description
            == "member 'm' of p has type `A`, but the closure has type `B`")
    }

    @Test func aDataMemberIsNotASlot() {
        let plugin = TypedDelegate(for: fx_plugin.self)
        #expect {
            try plugin.implement(\.version) { () -> Int32 in 0 }
        } throws: { error in
            guard case .invalidMember("version", "fx_plugin", let reason) = error as? DelegateError else { return false }
            return reason.contains("data member")
        }
    }

    @Test func overridesOfAWrappedTypedTableCallTheOriginal() throws {
        let base = TypedDelegate(for: fx_plugin.self)
        try base.implement(\.transform) { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
        let wrapper = TypedDelegate(for: fx_plugin.self, wrapping: base.typedTable)
        try wrapper.override(\.transform) {
            (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, value: Int64) -> Int64 in
            next(context, value) * 10
        }
        var called = false
        #expect(fx_plugin_transform(wrapper.typedTable, nil, 5, &called) == 60)
        #expect(called)
        #expect(wrapper.removeImplementation(for: try wrapper.methodName(of: \.transform)))
        #expect(fx_plugin_transform(wrapper.typedTable, nil, 5, &called) == 6)
    }

    @Test func blockDelegateSlotsNamedByKeyPath() throws {
        let plugin = try TypedPlugin()
        let table = plugin.table.assumingMemoryBound(to: fx_plugin.self)
        var called = false
        #expect(fx_plugin_transform(table, nil, 7, &called) == 7)
        #expect(!called)
        plugin.onTransform = { _, value in value * value }
        #expect(fx_plugin_transform(table, nil, 7, &called) == 49)
        #expect(called)
        plugin.onTransform = nil
        #expect(fx_plugin_transform(table, nil, 7, &called) == 7)
        #expect(!called)
    }

    @Test func mistypedKeyPathSlotThrowsAtCreationNamingBothTypes() {
        let error = #expect(throws: DelegateError.self) { _ = try MistypedPlugin() }
        #expect(error?.description.contains(
            "MistypedPlugin.onTransform (@Slot(\\fx_plugin.transform)): member 'transform' of fx_plugin has type "
                + "`@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.Int64`, but the closure "
                + "has type `@convention(c) (Swift.Optional<Swift.OpaquePointer>, Swift.Int64) -> Swift.Int64`") == true)
    }

    @Test func keyPathIntoAnotherStructThrowsAtCreation() {
        let error = #expect(throws: DelegateError.self) { _ = try CrossedPlugin() }
        #expect(error?.description.contains("CrossedPlugin.onClose (@Slot(\\sqlite3_io_methods.xClose)): member 'xClose' of fx_plugin cannot be used: "
            + "the slot's key path is into sqlite3_io_methods, not fx_plugin") == true)
    }
}
