import DelegateKitCSQLite
import DelegateKit
import DelegateKitFixtures

/// The misuses that stop the program, each the way a user would write it.
enum Misuse: String, CaseIterable {
    /// Prints how this executable was compiled, so a test can tell it runs a release build.
    case configuration
    case slotNamingNoMethod = "slot-naming-no-method"
    case slotOfAnotherSignature = "slot-of-another-signature"
    case slotIntoAnotherStruct = "slot-into-another-struct"
    case slotOfAnotherSwiftType = "slot-of-another-swift-type"
    case argumentOfAnotherType = "argument-of-another-type"
    case argumentOutOfRange = "argument-out-of-range"
    case returnValueOfAnotherType = "return-value-of-another-type"
    case returnBytesOfAnotherSize = "return-bytes-of-another-size"
    case jumpWithNoCallArmed = "jump-with-no-call-armed"

    func run() throws {
        switch self {
        case .configuration:
            #if DEBUG
            print("debug")
            #else
            print("release")
            #endif
        case .slotNamingNoMethod: _ = MisnamedPlugin()
        case .slotOfAnotherSignature: _ = MisdeclaredPlugin()
        case .slotIntoAnotherStruct: _ = CrossedPlugin()
        case .slotOfAnotherSwiftType: _ = MistypedPlugin()
        case .argumentOfAnotherType:
            try callTransform { call in _ = call.argument(1, as: Double.self) }
        case .argumentOutOfRange:
            try callTransform { call in _ = call.argument(2, as: Int64.self) }
        case .returnValueOfAnotherType:
            try callTransform { call in call.setReturnValue(Int32(1)) }
        case .returnBytesOfAnotherSize:
            try callTransform { call in withUnsafeBytes(of: Int32(1)) { call.setReturnBytes($0) } }
        case .jumpWithNoCallArmed:
            JumpTarget().jump()
        }
    }
}

/// Has C's fixture call `fx_plugin.transform` (`int64_t (void *, int64_t)`) served by `body`.
private func callTransform(_ body: @escaping @Sendable (CInvocation) -> Void) throws {
    let plugin = DynamicDelegate(protocol: ProtocolDescriptor(for: fx_plugin.self))
    try plugin.implement("transform", dynamic: body)
    var called = false
    _ = fx_plugin_transform(plugin.table.assumingMemoryBound(to: fx_plugin.self), nil, 20, &called)
    withExtendedLifetime(plugin) {}
}

final class MisnamedPlugin: BlockDelegate {
    @Slot("transfrom") var onTransform: ((UnsafeMutableRawPointer?, Int64) -> Int64)?
    init() { super.init(for: fx_plugin.self) }
}

final class MisdeclaredPlugin: BlockDelegate {
    @Slot("transform") var onTransform: ((UnsafeMutableRawPointer?, Int32) -> Int64)?
    init() { super.init(for: fx_plugin.self) }
}

/// The C signature fits (`int64_t (void *, int64_t)`); the Swift types are not the member's.
final class MistypedPlugin: BlockDelegate {
    @Slot(\fx_plugin.transform) var onTransform: ((OpaquePointer?, Int64) -> Int64)?
    init() { super.init(for: fx_plugin.self) }
}

final class CrossedPlugin: BlockDelegate {
    @Slot(\sqlite3_io_methods.xClose) var onClose: ((UnsafeMutablePointer<sqlite3_file>?) -> Int32)?
    init() { super.init(for: fx_plugin.self) }
}
