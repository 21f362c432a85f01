import DelegateKitCSQLite
import DelegateKit
import DelegateKitFixtures
import Testing

/// The C signature fits `transform`, the Swift type does not.
final class ReportingMistypedPlugin: BlockDelegate {
    @Slot(\fx_plugin.transform) var onTransform: ((OpaquePointer?, Int64) -> Int64)?
    init() throws { try super.init(for: fx_plugin.self) }
}

final class ReportingMisnamedPlugin: BlockDelegate {
    @Slot("transfrom") var onTransform: ((UnsafeMutableRawPointer?, Int64) -> Int64)?
    init() throws { try super.init(for: fx_plugin.self) }
}

final class ReportingCrossedPlugin: BlockDelegate {
    @Slot(\sqlite3_io_methods.xClose) var onClose: ((UnsafeMutablePointer<sqlite3_file>?) -> Int32)?
    init() throws { try super.init(for: fx_plugin.self) }
}

/// Well declared.
final class ReportingPlugin: BlockDelegate {
    @Slot(\fx_plugin.start) var onStart: ((UnsafeMutableRawPointer?) -> Int32)?
    @Slot(\fx_plugin.transform) var onTransform: ((UnsafeMutableRawPointer?, Int64) -> Int64)?
    init() throws { try super.init(for: fx_plugin.self) }
}

@Suite struct BlockDelegateValidationTests {
    @Test func aThrowingInitializerReportsASlotOfAnotherCSignature() {
        let error = #expect(throws: DelegateError.self) { _ = try ReportingMisdeclaredStream() }
        #expect(error == .slotMismatch(
            property: "ReportingMisdeclaredStream.onClose", slot: "\"close\"",
            error: .signatureMismatch(method: "close", protocol: "cookie_io_functions_t",
                                      expected: CSignature(.int32, [.pointer]), actual: CSignature(.int64, [.pointer]))))
        #expect(error?.description == "ReportingMisdeclaredStream.onClose (@Slot(\"close\")): method 'close' of "
            + "cookie_io_functions_t has C signature `int32_t (void *)`, but the closure has C signature `int64_t (void *)`")
    }

    @Test func aThrowingInitializerReportsASlotOfAnotherSwiftType() {
        #expect(throws: DelegateError.slotMismatch(
            property: "ReportingMistypedPlugin.onTransform", slot: "\\fx_plugin.transform",
            error: .typeMismatch(member: "transform", protocol: "fx_plugin",
                                 expected: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> Swift.Int64",
                                 actual: "@convention(c) (Swift.Optional<Swift.OpaquePointer>, Swift.Int64) -> Swift.Int64"))) {
            _ = try ReportingMistypedPlugin()
        }
    }

    @Test func aSlotNamingNoMethodOrAnotherStructIsReportedWhole() {
        let misnamed = #expect(throws: DelegateError.self) { _ = try ReportingMisnamedPlugin() }
        #expect(misnamed?.description == "ReportingMisnamedPlugin.onTransform (@Slot(\"transfrom\")): fx_plugin has no "
            + "method named 'transfrom'; did you mean 'transform'?")
        let crossed = #expect(throws: DelegateError.self) { _ = try ReportingCrossedPlugin() }
        #expect(crossed?.description == "ReportingCrossedPlugin.onClose (@Slot(\\sqlite3_io_methods.xClose)): member 'xClose' "
            + "of fx_plugin cannot be used: the slot's key path is into sqlite3_io_methods, not fx_plugin")
    }

    @Test func aBlockDelegateOfAStructServesTheFixtureLibrary() throws {
        let plugin = try ReportingPlugin()
        let table = plugin.table.assumingMemoryBound(to: fx_plugin.self)
        table.pointee.version = 2
        plugin.onStart = { _ in 0 }
        plugin.onTransform = { _, value in value * 3 }
        var called: UInt32 = 0
        let values: [Int64] = [1, 2, 3, 4]
        #expect(fx_plugin_run(table, nil, values, values.count, &called) == 30)
        #expect(called == UInt32(FX_CALLED_START | FX_CALLED_TRANSFORM))
        #expect(try plugin.dynamicDelegate.field("version", as: Int32.self) == 2)
    }
}
