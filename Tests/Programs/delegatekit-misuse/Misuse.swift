import DelegateKit
import DelegateKitFixtures

/// The misuses that stop the program, each the way a user would write it.
enum Misuse: String, CaseIterable {
    /// Prints how this executable was compiled, so a test can tell it runs a release build.
    case configuration
    case argumentOfAnotherType = "argument-of-another-type"
    case argumentOutOfRange = "argument-out-of-range"
    /// A struct read as its own type first, which is noted and not checked again, then as another.
    case structArgumentOfAnotherTypeAfterItsOwn = "struct-argument-of-another-type-after-its-own"
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
        case .argumentOfAnotherType:
            try callTransform { call in _ = call.argument(1, as: Double.self) }
        case .argumentOutOfRange:
            try callTransform { call in _ = call.argument(2, as: Int64.self) }
        case .structArgumentOfAnotherTypeAfterItsOwn:
            nonisolated(unsafe) var calls = 0
            let s8 = IntAndFloat.cType
            let closure = try CClosure(signature: CSignature(s8, [s8, s8])) { call in
                calls += 1
                if calls == 1 {
                    call.setReturnValue(call.argument(0, as: IntAndFloat.self))
                } else {
                    _ = call.argument(0, as: TwoFloats.self)
                }
            }
            for _ in 0..<2 { _ = fx_call_S8(closure.address, S8(a: 1, b: 2), S8(a: 3, b: 4)) }
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

/// The fixture's `S8`, `struct { int32_t a; float b; }`, as a Swift type of this program's own (the test
/// target conforms the imported `S8` itself; a second conformance of a C type would be one more to keep).
struct IntAndFloat: CValue {
    var a: Int32
    var b: Float
    static var cType: CType { .structure([.int32, .float]) }
}

/// `struct { float a, b; }`: as large as `S8`, of another C type.
struct TwoFloats: CValue {
    var a: Float
    var b: Float
    static var cType: CType { .structure([.float, .float]) }
}
