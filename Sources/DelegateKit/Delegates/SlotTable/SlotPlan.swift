import Synchronization

/// An immutable picture of one slot for calls to run against: the stack top first, the observers, the
/// original function and where to forward. Every change builds a new plan and publishes it with one
/// atomic store; a call reads the plan once and needs no lock.
///
/// A call must also cost no reference counting, so the plan keeps its objects alive in ordinary arrays
/// but walks unmanaged copies of them, laid out once when the plan is built.
@usableFromInline
final class SlotPlan: Retirable, @unchecked Sendable {  // Immutable after init but for the atomic flag; the buffers are freed in deinit.
    /// One implementation as a call sees it. Not copyable: a removal changes its two atomic bytes while
    /// calls read the step in place.
    @usableFromInline
    struct Step: ~Copyable {
        let thunk: UnsafeMutableRawPointer  // Unmanaged Implementation (plain) or OverrideThunk
        @usableFromInline let implementation: Unmanaged<Implementation>
        let isOverride: Bool
        /// The ``Flags/once`` bit of ``flags`` as a plain constant: testing it after every layer's call
        /// costs an instruction less than loading the atomic byte (measured on the stack benchmark).
        let once: Bool
        /// The closure with its Swift types, for a `next` of the same types; nil for a `once` layer,
        /// which must go through the claim in ``invoke(from:_:_:)``.
        @usableFromInline let typed: Unmanaged<TypedEntry>?
        /// How the override above reaches this layer, a ``TypedCall``: ``TypedCall/plain`` or
        /// ``TypedCall/override`` when both have the same Swift types (its `next` then calls ``typed``
        /// directly), else ``TypedCall/none``. Settled when the plan is built, so a call compares no types;
        /// ``TypedCall/none`` once the layer is removed.
        @usableFromInline let fromAbove: Atomic<UInt8>
        /// ``Flags``.
        let flags: Atomic<UInt8>
    }

    /// See ``Step/fromAbove``.
    @usableFromInline
    enum TypedCall: UInt8 {
        case none, plain, override
    }

    /// ``Step/flags`` bits: zero for a layer any call may run.
    enum Flags {
        /// The layer serves one call, claimed through its implementation.
        static let once: UInt8 = 1
        /// The layer was removed since the plan was built: no call may start it any more.
        static let removed: UInt8 = 2
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
    /// The original, when the plan runs in registers: an override's `next` past the stack calls it
    /// directly with its arguments in registers. Every override of such a plan has a register form, so its
    /// Swift types put each argument where the signature does.
    @usableFromInline let originalInRegisters: UnsafeRawPointer?
    let slot: Int
    let methodName: String
    /// Weak: a call may still run a retired plan after its delegate is gone (see ``Reclaimer``). Read only
    /// by a layer that removes itself.
    weak let owner: SlotTable?

    /// A plan is retired by being replaced in its cell, which a call checks after it recorded the plan as
    /// running (see ``PlanCell``).
    var runningIdentity: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }

    init(
        owner: SlotTable, slot: Int, methodName: String, prepared: PreparedSignature, levels: [Implementation],
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
        for (index, implementation) in levels.enumerated() {
            let typed = implementation.once ? nil : implementation.typed.map { Unmanaged.passUnretained($0) }
            let thunk: UnsafeMutableRawPointer, isOverride: Bool
            if let override = implementation.override {
                (thunk, isOverride) = (Unmanaged.passUnretained(override).toOpaque(), true)
            } else {
                (thunk, isOverride) = (Unmanaged.passUnretained(implementation).toOpaque(), false)
            }
            var fromAbove = TypedCall.none
            if index > 0, steps[index - 1].isOverride, let above = steps[index - 1].typed, let typed,
                above._withUnsafeGuaranteedRef({ $0.functionType }) == typed._withUnsafeGuaranteedRef({ $0.functionType }) {
                fromAbove = isOverride ? .override : .plain
            }
            steps.initializeElement(at: index, to: Step(
                thunk: thunk, implementation: .passUnretained(implementation), isOverride: isOverride,
                once: implementation.once, typed: typed, fromAbove: Atomic(fromAbove.rawValue),
                flags: Atomic(implementation.once ? Flags.once : 0)))
        }
        self.before = .allocate(capacity: before.count)
        _ = self.before.initialize(from: before.map { Unmanaged.passUnretained($0) })
        self.after = .allocate(capacity: after.count)
        _ = self.after.initialize(from: after.map { Unmanaged.passUnretained($0) })
        if before.isEmpty, after.isEmpty, !steps.isEmpty, !steps[0].isOverride, !steps[0].once {
            only = steps[0].thunk
        } else {
            only = nil
        }
        runsInRegisters = prepared.takesRegisters && observers.allSatisfy(\.hasRegisters) && levels.allSatisfy { implementation in
            implementation.override?.hasRegisters ?? true
        }
        originalInRegisters = runsInRegisters ? original : nil
    }

    deinit {
        steps.deinitialize()
        steps.deallocate()
        before.deallocate()
        after.deallocate()
    }

    /// A whole call of the slot: observers before, the stack, observers after.
    func run(_ result: UnsafeMutableRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        if let only {
            return Unmanaged<Implementation>.fromOpaque(only)._withUnsafeGuaranteedRef { $0.body(result, arguments) }
        }
        for observer in before { observer._withUnsafeGuaranteedRef { $0.notify(self, result: nil, arguments) } }
        invoke(from: 0, result, arguments)
        for observer in after { observer._withUnsafeGuaranteedRef { $0.notify(self, result: result, arguments) } }
    }

    /// Runs the first implementation at or below `level` that may run; past the stack, the original, the
    /// forwarding target, or the default value.
    @usableFromInline
    func invoke(from level: Int, _ result: UnsafeMutableRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        if let index = claimStep(from: level) {
            if steps[index].isOverride {
                Unmanaged<OverrideThunk>.fromOpaque(steps[index].thunk)._withUnsafeGuaranteedRef {
                    $0.body(context(below: index), result, arguments)
                }
            } else {
                Unmanaged<Implementation>.fromOpaque(steps[index].thunk)._withUnsafeGuaranteedRef { $0.body(result, arguments) }
            }
            finish(index)
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
            return Unmanaged<Implementation>.fromOpaque(only)._withUnsafeGuaranteedRef { $0.call(registers) }
        }
        guard runsInRegisters else { return runLaidOut(registers.integers, registers.sse) }
        if before.isEmpty && after.isEmpty { return invoke(from: 0, registers) }
        // Stored once for every observer to read. Unprotected: the observers only read these registers,
        // and a stack protector would cost every call of the slot.
        var spilled = registers
        return _withUnprotectedUnsafePointer(to: &spilled) { spilled in
            for observer in before { observer._withUnsafeGuaranteedRef { $0.notify(result: .zero, spilled) } }
            let result = invoke(from: 0, spilled.pointee)
            for observer in after { observer._withUnsafeGuaranteedRef { $0.notify(result: result, spilled) } }
            return result
        }
    }

    /// ``run(_:_:)`` on an argument array made from the registers, for a plan with a layer or observer
    /// that has no register form. Out of line, its stack array puts no stack protector and no large frame
    /// on every call of every slot; given the registers by value (see ``ArgumentRegisters/Integers``).
    @inline(never)
    private func runLaidOut(_ integers: ArgumentRegisters.Integers, _ sse: ArgumentRegisters.SSE) -> RegisterResult {
        prepared.registerLayout.unsafelyUnwrapped.run(ArgumentRegisters(integers, sse)) { run($0, $1) }
    }

    /// ``invoke(from:_:_:)`` in register form: the plan must run in registers (see ``runsInRegisters``).
    @inline(__always)
    func invoke(from level: Int, _ registers: ArgumentRegisters) -> RegisterResult {
        if let index = claimStep(from: level) {
            let result: RegisterResult
            if steps[index].isOverride {
                result = Unmanaged<OverrideThunk>.fromOpaque(steps[index].thunk)._withUnsafeGuaranteedRef {
                    $0.call(context(below: index), registers)
                }
            } else {
                result = Unmanaged<Implementation>.fromOpaque(steps[index].thunk)._withUnsafeGuaranteedRef { $0.call(registers) }
            }
            finish(index)
            return result
        }
        if let function = original ?? forward?.function { return registers.call(function) }
        return .zero
    }

    /// The first layer at or below `level` this call may run: every layer but one removed since the plan
    /// was built, and a `once` layer whose one call another call has taken.
    @inline(__always)
    private func claimStep(from level: Int) -> Int? {
        var index = level
        while index < steps.count {
            let flags = steps[index].flags.load(ordering: .relaxed)
            if flags == 0 || flags == Flags.once && steps[index].implementation._withUnsafeGuaranteedRef({ $0.claim() }) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// Marks the layers of `removed` in this (retired) plan so that no call starts them any more: a `next`
    /// from above skips them. A call runs one plan from start to end, so a plan built before a removal can
    /// still be running while the removal returns. Under the delegate's lock.
    func skip(_ removed: [Implementation]) {
        for index in steps.indices where removed.contains(where: { $0 === steps[index].implementation.takeUnretainedValue() }) {
            steps[index].fromAbove.store(TypedCall.none.rawValue, ordering: .relaxed)
            steps[index].flags.bitwiseOr(Flags.removed, ordering: .relaxed)
        }
    }

    /// The context an override at `index` hands its `Next`.
    @inline(__always)
    private func context(below index: Int) -> CallContext {
        CallContext(plan: Unmanaged.passUnretained(self), level: index + 1)
    }

    /// After a layer ran: a `once` layer removes itself.
    @inline(__always)
    private func finish(_ index: Int) {
        if steps[index].once { owner?.remove(steps[index].implementation.takeUnretainedValue(), slot: slot) }
    }

    /// Whether a call from `level` would reach more than the default value.
    func isAvailable(from level: Int) -> Bool {
        levels.indices.dropFirst(level).contains { index in
            steps[index].flags.load(ordering: .relaxed) & Flags.removed == 0 && !levels[index].isSpent
        } || original != nil || forward?.function != nil
    }
}
