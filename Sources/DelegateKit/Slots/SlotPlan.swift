import CFFIShim
import Synchronization

/// An immutable picture of one slot for calls to run against: the stack top first, the observers, the
/// original function and where to forward. Every change builds a new plan and publishes it with one
/// atomic store; a call reads the plan once and needs no lock.
///
/// A call must also cost no reference counting, so the plan keeps its objects alive in ordinary arrays
/// but walks unmanaged copies of them, laid out once when the plan is built.
@usableFromInline
final class SlotPlan: Retirable, @unchecked Sendable {  // Immutable after init but for the atomic flag; the buffers are freed in deinit.
    /// One implementation as a call sees it.
    @usableFromInline
    struct Step {
        let thunk: UnsafeMutableRawPointer  // Unmanaged PlainClosure or OverrideThunk
        @usableFromInline let implementation: Unmanaged<Implementation>
        let isOverride: Bool
        let once: Bool
        /// The closure with its Swift types, for a `next` of the same types; nil for a `once` layer,
        /// which must go through the claim in ``invoke(from:_:_:)``.
        @usableFromInline let typed: Unmanaged<TypedEntry>?
        /// How the override above this layer reaches it: ``TypedCall/plain`` or ``TypedCall/override``
        /// when both have the same Swift types (its `next` then calls ``typed`` directly), else
        /// ``TypedCall/none``. Settled when the plan is built, so a call compares no types.
        @usableFromInline var fromAbove: TypedCall = .none
    }

    /// See ``Step/fromAbove``.
    @usableFromInline
    enum TypedCall: UInt8 {
        case none, plain, override
    }

    let levels: [Implementation]
    private let observers: [Observer]
    /// The one closure a call runs when that is all it needs (a plain top, no observers): the common case
    /// of a `.stable` slot, called without walking the plan.
    let only: UnsafeMutableRawPointer?
    @usableFromInline let steps: UnsafeMutableBufferPointer<Step>
    private let before: UnsafeMutableBufferPointer<Unmanaged<Observer>>
    private let after: UnsafeMutableBufferPointer<Unmanaged<Observer>>
    let original: UnsafeRawPointer?
    let forward: ForwardRoute?
    let prepared: PreparedSignature
    /// Whether a call entering in register form can run the whole plan in that form: every observer
    /// and every override has a register form (a plain closure always has one where the signature takes
    /// registers). Otherwise such a call lays its arguments out for libffi once and runs ``run(_:_:)``.
    let runsInRegisters: Bool
    let slot: Int
    let methodName: String
    // The delegate outlives its plans: they are only reachable through it.
    unowned(unsafe) let owner: DynamicDelegate

    /// Nothing to do: a plan is retired by being replaced in its cell, which a call checks after it
    /// recorded the plan as running (see ``PlanCell``).
    func retire() {}

    var runningIdentity: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    /// Never: a plan's identity is its own address, which no other plan takes while a waiter holds it.
    var isReleased: Bool { false }

    init(
        owner: DynamicDelegate, slot: Int, methodName: String, prepared: PreparedSignature, levels: [Implementation],
        before: [Observer], after: [Observer], original: UnsafeRawPointer?, forward: ForwardRoute?
    ) {
        self.owner = owner
        self.slot = slot
        self.methodName = methodName
        self.prepared = prepared
        self.levels = levels
        self.observers = before + after
        self.original = original
        self.forward = forward
        steps = .allocate(capacity: levels.count)
        _ = steps.initialize(from: levels.map { implementation in
            switch implementation.body {
            case .plain(let closure):
                return Step(thunk: Unmanaged.passUnretained(closure).toOpaque(), implementation: .passUnretained(implementation),
                            isOverride: false, once: implementation.once,
                            typed: implementation.once ? nil : implementation.typed.map { .passUnretained($0) })
            case .override(let thunk):
                return Step(thunk: Unmanaged.passUnretained(thunk).toOpaque(), implementation: .passUnretained(implementation),
                            isOverride: true, once: implementation.once,
                            typed: implementation.once ? nil : implementation.typed.map { .passUnretained($0) })
            }
        })
        for index in steps.indices.dropFirst() where steps[index - 1].isOverride {
            guard let above = steps[index - 1].typed, let below = steps[index].typed,
                above._withUnsafeGuaranteedRef({ $0.functionType }) == below._withUnsafeGuaranteedRef({ $0.functionType })
            else { continue }
            steps[index].fromAbove = steps[index].isOverride ? .override : .plain
        }
        self.before = .allocate(capacity: before.count)
        _ = self.before.initialize(from: before.map { Unmanaged.passUnretained($0) })
        self.after = .allocate(capacity: after.count)
        _ = self.after.initialize(from: after.map { Unmanaged.passUnretained($0) })
        if before.isEmpty, after.isEmpty, let top = steps.first, !top.isOverride, !top.once {
            only = top.thunk
        } else {
            only = nil
        }
        runsInRegisters = prepared.takesRegisters && observers.allSatisfy(\.hasRegisters) && levels.allSatisfy { implementation in
            if case .override(let thunk) = implementation.body { return thunk.hasRegisters }
            return true
        }
    }

    deinit {
        steps.deallocate()
        before.deallocate()
        after.deallocate()
    }

    /// A whole call of the slot: observers before, the stack, observers after.
    func run(_ result: UnsafeMutableRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        if let only {
            return Unmanaged<PlainClosure>.fromOpaque(only)._withUnsafeGuaranteedRef { $0.body(result, arguments) }
        }
        for observer in before { observer._withUnsafeGuaranteedRef { $0.notify(self, result: nil, arguments) } }
        invoke(from: 0, result, arguments)
        for observer in after { observer._withUnsafeGuaranteedRef { $0.notify(self, result: result, arguments) } }
    }

    /// Runs the first implementation at or below `level` that may run; past the stack, the original, the
    /// forwarding target, or the default value.
    @usableFromInline
    func invoke(from level: Int, _ result: UnsafeMutableRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        if let (step, index) = claimStep(from: level) {
            if step.isOverride {
                Unmanaged<OverrideThunk>.fromOpaque(step.thunk)._withUnsafeGuaranteedRef {
                    $0.body(context(below: index), result, arguments)
                }
            } else {
                Unmanaged<PlainClosure>.fromOpaque(step.thunk)._withUnsafeGuaranteedRef { $0.body(result, arguments) }
            }
            finish(step)
            return
        }
        if let original {
            prepared.call(original, result: result, arguments: arguments)
        } else if let function = forward?.function {
            prepared.call(function, result: result, arguments: arguments)
        } else {
            prepared.zeroResult(result)
        }
    }

    /// ``run(_:_:)`` for a call that entered in register form (the signature takes registers). Inlined
    /// into the dispatcher's entry, so that the registers stay registers on the way to the closures.
    @inline(__always)
    func run(_ registers: ArgumentRegisters) -> RegisterResult {
        if let only {
            return Unmanaged<PlainClosure>.fromOpaque(only)._withUnsafeGuaranteedRef { $0.call(registers) }
        }
        guard runsInRegisters else {
            return prepared.registerLayout.unsafelyUnwrapped.run(registers) { run($0, $1) }
        }
        for observer in before { observer._withUnsafeGuaranteedRef { $0.notify(result: .zero, registers) } }
        let result = invoke(from: 0, registers)
        for observer in after { observer._withUnsafeGuaranteedRef { $0.notify(result: result, registers) } }
        return result
    }

    /// ``invoke(from:_:_:)`` in register form: the plan must run in registers (see ``runsInRegisters``).
    @inline(__always)
    func invoke(from level: Int, _ registers: ArgumentRegisters) -> RegisterResult {
        if let (step, index) = claimStep(from: level) {
            let result: RegisterResult
            if step.isOverride {
                result = Unmanaged<OverrideThunk>.fromOpaque(step.thunk)._withUnsafeGuaranteedRef {
                    $0.call(context(below: index), registers)
                }
            } else {
                result = Unmanaged<PlainClosure>.fromOpaque(step.thunk)._withUnsafeGuaranteedRef { $0.call(registers) }
            }
            finish(step)
            return result
        }
        if let function = original ?? forward?.function { return registers.call(function) }
        return .zero
    }

    /// The first layer at or below `level` this call may run, and its index: every layer but a `once`
    /// layer whose one call another call has taken.
    @inline(__always)
    private func claimStep(from level: Int) -> (Step, Int)? {
        var index = level
        while index < steps.count {
            let step = steps[index]
            if !step.once || step.implementation._withUnsafeGuaranteedRef({ $0.claim() }) { return (step, index) }
            index += 1
        }
        return nil
    }

    /// The context an override at `index` hands its `Next`.
    @inline(__always)
    private func context(below index: Int) -> CallContext {
        CallContext(plan: Unmanaged.passUnretained(self), level: index + 1, implementation: steps[index].implementation)
    }

    /// After a layer ran: a `once` layer removes itself.
    @inline(__always)
    private func finish(_ step: Step) {
        if step.once { owner.remove(step.implementation.takeUnretainedValue(), slot: slot) }
    }

    /// Whether a call from `level` would reach more than the default value.
    func isAvailable(from level: Int) -> Bool {
        levels[min(level, levels.count)...].contains { !$0.isSpent } || original != nil || forward?.function != nil
    }
}
