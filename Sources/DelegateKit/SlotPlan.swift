import CFFIShim
import Synchronization

/// An immutable picture of one slot for calls to run against: the stack top first, the observers, the
/// original function and where to forward. Every change builds a new plan and publishes it with one
/// atomic store; a call reads the plan once and needs no lock.
@usableFromInline
final class SlotPlan: @unchecked Sendable {  // Immutable after init.
    let levels: [Implementation]
    let before: [Observer]
    let after: [Observer]
    let original: UnsafeRawPointer?
    let forward: ForwardRoute?
    let prepared: FFISignature
    let slot: Int
    let methodName: String
    // The delegate outlives its plans: they are only reachable through it.
    unowned(unsafe) let owner: DynamicDelegate

    init(
        owner: DynamicDelegate, slot: Int, methodName: String, prepared: FFISignature, levels: [Implementation],
        before: [Observer], after: [Observer], original: UnsafeRawPointer?, forward: ForwardRoute?
    ) {
        self.owner = owner
        self.slot = slot
        self.methodName = methodName
        self.prepared = prepared
        self.levels = levels
        self.before = before
        self.after = after
        self.original = original
        self.forward = forward
    }

    /// A whole call of the slot: observers before, the stack, observers after.
    func run(_ result: UnsafeMutableRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        for observer in before { observer.notify(method: methodName, signature: prepared.signature, result: nil, arguments) }
        invoke(from: 0, result, arguments)
        for observer in after { observer.notify(method: methodName, signature: prepared.signature, result: result, arguments) }
    }

    /// Runs the first implementation at or below `level` that may run; past the stack, the original, the
    /// forwarding target, or the default value.
    func invoke(from level: Int, _ result: UnsafeMutableRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        var index = level
        while index < levels.count {
            let implementation = levels[index]
            guard implementation.claim() else {
                index += 1
                continue
            }
            switch implementation.body {
            case .plain(let thunk):
                thunk.body(result, arguments)
            case .override(let thunk):
                thunk.body(CallContext(plan: self, level: index + 1, implementation: implementation), result, arguments)
            }
            if implementation.once { owner.remove(implementation, slot: slot) }
            return
        }
        if let original {
            prepared.call(original, result: result, arguments: arguments)
        } else if let function = forward?.function {
            prepared.call(function, result: result, arguments: arguments)
        } else {
            result.initializeMemory(as: UInt8.self, repeating: 0, count: prepared.resultBufferSize)
        }
    }

    /// Whether a call from `level` would reach more than the default value.
    func isAvailable(from level: Int) -> Bool {
        levels[min(level, levels.count)...].contains { !$0.isSpent } || original != nil || forward?.function != nil
    }
}

/// How a slot reaches its forwarding target: the address of the target table's slot, read at each call
/// so later changes to the target are followed.
struct ForwardRoute: @unchecked Sendable {  // The table it points into is kept alive by `keepAlive`.
    let slotAddress: UnsafeRawPointer
    let keepAlive: AnyObject?

    var function: UnsafeRawPointer? {
        cffi_load_pointer(slotAddress.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)).map(UnsafeRawPointer.init)
    }
}

/// The cell a slot's dispatcher reads its current plan from.
final class PlanCell: @unchecked Sendable {  // Atomic is safe to share; Swift does not mark it Sendable for pointer values.
    let plan = Atomic<UnsafeRawPointer?>(nil)

    /// The dispatcher: the C function a slot holds whenever a call needs more than one closure.
    static func dispatcher(for cell: PlanCell, signature: CSignature) throws -> CClosure {
        try CClosure(thunk: CallThunk(signature: signature) { result, arguments in
            let plan = cell.plan.load(ordering: .acquiring).unsafelyUnwrapped
            Unmanaged<SlotPlan>.fromOpaque(plan)._withUnsafeGuaranteedRef { $0.run(result, arguments) }
        })
    }
}
