import DelegateKitBenchmarkSupport
import DelegateKit

/// The ways a C loop can reach the same computation, cheapest first.
enum PathKind: String, CaseIterable, Sendable {
    case direct = "direct C call"
    case handWritten = "hand-written context thunk"
    /// What a Swift programmer writes without DelegateKit where C takes no context: a `@convention(c)`
    /// closure that reads its state from a global. The yardstick of the debug table.
    case plainClosure = "plain @convention(c) closure, reading a global"
    case rawLibffi = "raw libffi, C handler"
    case closure = "CClosure"
    case capturingLiteral = "CClosure, capturing literal"
    case closureValue = "CClosure, capturing closure value"
    case invocation = "CClosure(signature:) + CInvocation"
    case slot = "DynamicDelegate slot"
    case stackOnly = "slot: stack of 3"
    case observersOnly = "slot + 2 observers"
    case stacked = "slot: stack of 3 + 2 observers"
    case stable = ".stable slot"
    case blockSlot = "BlockDelegate @Slot property"
    case wrapped = "wrapped original slot"
    case wrappedOverride = "wrapped slot, override calling original"

    /// A short name for the command line.
    var key: String { String(describing: self) }
}

/// A path ready to run: the function pointer the C loop calls, and whatever keeps it alive.
final class PreparedPath {
    let kind: PathKind
    let signature: BenchSignature
    let function: UnsafeRawPointer
    let context: UnsafeMutableRawPointer?
    private let keepAlive: [AnyObject]
    private let cleanup: () -> Void

    init(_ kind: PathKind, _ signature: BenchSignature) throws {
        self.kind = kind
        self.signature = signature
        var keep: [AnyObject] = []
        var cleanup: () -> Void = {}
        var context: UnsafeMutableRawPointer?
        func slot(_ delegate: DynamicDelegate) -> UnsafeRawPointer {
            delegate.table.load(as: UnsafeRawPointer.self)
        }
        switch kind {
        case .direct:
            function = bench_direct(Int32(signature.rawValue))
        case .handWritten:
            let thunk = handWrittenThunk(signature)
            function = thunk.function
            context = thunk.context
            cleanup = { Unmanaged<AnyObject>.fromOpaque(thunk.context).release() }
        case .plainClosure:
            function = plainClosure(signature)
        case .rawLibffi:
            var code: UnsafeMutableRawPointer?
            let closure = bench_raw_closure(Int32(signature.rawValue), &code)
            function = UnsafeRawPointer(code!)
            cleanup = { bench_raw_closure_free(closure) }
        case .closure:
            let closure = try makeClosure(signature)
            keep.append(closure)
            function = closure.address
        case .capturingLiteral, .closureValue:
            let closure = try kind == .capturingLiteral ? makeCapturingLiteral(signature) : makeClosureValue(signature)
            keep.append(closure)
            function = closure.address
        case .invocation:
            let closure = try makeInvocationClosure(signature)
            keep.append(closure)
            function = closure.address
        case .slot:
            let delegate = DynamicDelegate(protocol: signature.descriptor)
            try implement(delegate, signature)
            keep.append(delegate)
            function = slot(delegate)
        case .stacked, .stackOnly, .observersOnly:
            let delegate = DynamicDelegate(protocol: signature.descriptor)
            try implement(delegate, signature)
            if kind != .observersOnly {
                try overridePassingThrough(delegate, signature)
                try overridePassingThrough(delegate, signature)
            }
            if kind != .stackOnly {
                keep += [try observeDoingNothing(delegate, signature, .before), try observeDoingNothing(delegate, signature, .after)]
            }
            keep.append(delegate)
            function = slot(delegate)
        case .stable:
            let delegate = DynamicDelegate(protocol: signature.descriptor)
            try implement(delegate, signature)
            try delegate.setPolicy(.stable)
            keep.append(delegate)
            function = slot(delegate)
        case .blockSlot:
            let block = try makeBlockSlot(signature)
            keep.append(block)
            function = UnsafeRawPointer(block.table.load(as: UnsafeRawPointer.self))
        case .wrapped, .wrappedOverride:
            // An original table whose one slot is the C function.
            let original = UnsafeMutablePointer<UnsafeRawPointer>.allocate(capacity: 1)
            original.initialize(to: bench_direct(Int32(signature.rawValue)))
            let delegate = DynamicDelegate(protocol: signature.descriptor, wrapping: UnsafeRawPointer(original))
            if kind == .wrappedOverride { try overridePassingThrough(delegate, signature) }
            keep.append(delegate)
            function = slot(delegate)
            cleanup = { original.deallocate() }
        }
        self.context = context
        self.keepAlive = keep
        self.cleanup = cleanup
    }

    deinit { cleanup() }

    /// Runs the C loop `n` times; returns its checksum.
    @discardableResult
    func run(_ n: Int64) -> Double { signature.loop(function, context: context, n) }
}
