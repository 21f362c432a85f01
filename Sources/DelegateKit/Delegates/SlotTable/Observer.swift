import Synchronization

/// One observer in one or more slots.
@usableFromInline
final class Observer: @unchecked Sendable {  // Weak references load safely from any thread; the rest is immutable or atomic.
    @usableFromInline
    typealias ArrayBody = @Sendable (
        _ plan: SlotPlan, _ result: UnsafeMutableRawPointer?, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Void

    /// An observer in register form (see ``RegisterPath``), given the call's result registers (zero
    /// before the call) and the argument registers, which the plan stores once for all its observers
    /// (passing all thirteen to each would pass some on the stack); a struct so that it is stored as it is.
    @frozen @usableFromInline
    struct RegisterBody: Sendable {
        @usableFromInline let call: @Sendable (RegisterResult, UnsafePointer<ArgumentRegisters>) -> Void

        @inlinable
        init(_ call: @escaping @Sendable (RegisterResult, UnsafePointer<ArgumentRegisters>) -> Void) {
            self.call = call
        }
    }

    let timing: ObservationTiming
    private let body: ArrayBody
    private let registers: RegisterBody
    /// Whether ``registers`` is the observer's own (else it is never called).
    let hasRegisters: Bool
    private let cancelled = Atomic<Bool>(false)
    private let tiedToOwner: Bool
    private weak var owner: AnyObject?
    private weak var delegate: SlotTable?

    init(
        timing: ObservationTiming, owner: AnyObject?, delegate: SlotTable, registers: RegisterBody?,
        body: @escaping ArrayBody
    ) {
        self.timing = timing
        self.body = body
        self.registers = registers ?? RegisterBody { _, _ in }
        hasRegisters = registers != nil
        self.tiedToOwner = owner != nil
        self.owner = owner
        self.delegate = delegate
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func notify(_ plan: SlotPlan, result: UnsafeMutableRawPointer?, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        guard !isCancelled else { return }
        guard tiedToOwner else { return body(plan, result, arguments) }
        // Holding the owner for the call keeps it from dying halfway; a dead owner ends the observation.
        guard let owner else { return cancel() }
        withExtendedLifetime(owner) { body(plan, result, arguments) }
    }

    /// ``notify(_:result:_:)`` for a call in register form; only when ``hasRegisters``.
    @inline(__always)
    func notify(result: RegisterResult, _ registers: UnsafePointer<ArgumentRegisters>) {
        guard !isCancelled else { return }
        guard tiedToOwner else { return self.registers.call(result, registers) }
        notifyHoldingOwner(result: result, registers)
    }

    /// Out of line, so that a plan's loop over its observers stays small for the common observer.
    @inline(never)
    private func notifyHoldingOwner(result: RegisterResult, _ registers: UnsafePointer<ArgumentRegisters>) {
        guard let owner else { return cancel() }
        withExtendedLifetime(owner) { self.registers.call(result, registers) }
    }

    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        delegate?.removeObserver(self)
    }
}

extension SlotTable {
    /// Takes the observer out of every slot; the plans that held it are released once no call runs them.
    func removeObserver(_ observer: Observer) {
        change { state, changes in
            for index in state.slots.indices where state.slots[index].observers.contains(where: { $0 === observer }) {
                state.slots[index].observers.removeAll { $0 === observer }
                changes.changed(index)
            }
        }
    }
}
