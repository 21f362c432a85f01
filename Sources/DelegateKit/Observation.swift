import Synchronization

/// When an observer runs relative to the slot's implementation.
public enum ObservationTiming: Sendable {
    /// Before the implementation, seeing the arguments.
    case before
    /// After the implementation, seeing the arguments and the result C receives.
    case after
}

/// Keeps an observation alive: ``cancel()`` ends it, and so does deinitializing the token.
public final class ObservationToken: Sendable {
    /// Emptied by ``cancel()``, so that a kept token does not keep the observer's closure.
    private let observers: Locked<[Observer]>

    init(_ observers: [Observer]) { self.observers = Locked(observers) }

    deinit { cancel() }

    /// Stops the observation. No observer call starts after this returns; one already running finishes.
    /// When it returns (from outside an observer call), the observer's closure and what it captured are
    /// released: neither the token nor the delegate keeps them.
    public func cancel() {
        let observers = self.observers.withLock { observers in
            defer { observers = [] }
            return observers
        }
        for observer in observers { observer.cancel() }
    }

    /// Whether ``cancel()`` was called, the token went away, or the observation's owner was deinitialized.
    public var isCancelled: Bool { observers.withLock { $0.allSatisfy(\.isCancelled) } }
}

/// One observer in one or more slots.
@usableFromInline
final class Observer: @unchecked Sendable {  // Weak references load safely from any thread; the rest is immutable or atomic.
    @usableFromInline
    typealias Body = @Sendable (
        _ plan: SlotPlan, _ result: UnsafeMutableRawPointer?, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Void

    /// An observer in register form (see ``RegisterPath``), given the call's result registers (zero
    /// before the call); a struct so that it is stored as it is.
    @frozen @usableFromInline
    struct RegisterBody: Sendable {
        @usableFromInline let call: @Sendable (
            RegisterResult, UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double,
            Double, Double
        ) -> Void

        @inlinable
        init(
            _ call: @escaping @Sendable (
                RegisterResult, UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double,
                Double, Double
            ) -> Void
        ) {
            self.call = call
        }
    }

    let timing: ObservationTiming
    private let body: Body
    private let registers: RegisterBody
    /// Whether ``registers`` is the observer's own (else it is never called).
    let hasRegisters: Bool
    private let cancelled = Atomic<Bool>(false)
    private let tiedToOwner: Bool
    private weak var owner: AnyObject?
    private weak var delegate: DynamicDelegate?

    init(
        timing: ObservationTiming, owner: AnyObject?, delegate: DynamicDelegate, registers: RegisterBody?,
        body: @escaping Body
    ) {
        self.timing = timing
        self.body = body
        self.registers = registers ?? RegisterBody { _, _, _, _, _, _, _, _, _, _, _, _, _, _ in }
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
    func notify(result: RegisterResult, _ r: ArgumentRegisters) {
        guard !isCancelled else { return }
        guard tiedToOwner else { return call(result, r) }
        notifyHoldingOwner(result: result, r)
    }

    /// Out of line, so that a plan's loop over its observers stays small for the common observer.
    @inline(never)
    private func notifyHoldingOwner(result: RegisterResult, _ r: ArgumentRegisters) {
        guard let owner else { return cancel() }
        withExtendedLifetime(owner) { call(result, r) }
    }

    @inline(__always)
    private func call(_ result: RegisterResult, _ r: ArgumentRegisters) {
        registers.call(
            result, r.integers.0, r.integers.1, r.integers.2, r.integers.3, r.integers.4,
            r.sse.0, r.sse.1, r.sse.2, r.sse.3, r.sse.4, r.sse.5, r.sse.6, r.sse.7)
    }

    func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        delegate?.removeObserver(self)
    }
}

extension DynamicDelegate {
    /// Calls `body` with the arguments of every call of `method`, `.before` or `.after` its
    /// implementation, in registration order with other observers. Observers cannot change the result.
    ///
    /// With an `owner`, the observation ends by itself when the owner is deinitialized (REObserver).
    /// Under the default policy an observer does not make an empty slot respond: calls still go to
    /// what lies below (the original, the forwarding target); use ``SlotPolicy/stable`` to see calls of an
    /// empty slot. Throws like `implement` when the argument types are not the method's.
    @inlinable
    public func observe<each A: CValue>(
        _ method: String, _ timing: ObservationTiming, owner: AnyObject? = nil,
        _ body: @escaping @Sendable (repeat each A) -> Void
    ) throws -> ObservationToken {
        let arguments = try CSignature.of(CVoid.self, repeat (each A).self).argumentTypes
        return try addObserver(method, timing, owner: owner, arguments: arguments, result: nil) { _, _, pointers in
            var cursor = pointers
            body(repeat nextArgument(&cursor) as each A)
        }
    }

    /// Calls `body` after every call of `method` with the result C receives and the arguments.
    @inlinable
    public func observeResult<each A: CValue, R: CValue>(
        _ method: String, owner: AnyObject? = nil, _ body: @escaping @Sendable (R, repeat each A) -> Void
    ) throws -> ObservationToken {
        let signature = try CSignature.of(R.self, repeat (each A).self)
        return try addObserver(method, .after, owner: owner, arguments: signature.argumentTypes, result: signature.returnType) {
            _, result, pointers in
            var cursor = pointers
            body(UnsafeRawPointer(result.unsafelyUnwrapped).loadUnaligned(as: R.self), repeat nextArgument(&cursor) as each A)
        }
    }

    /// Calls `body` for every call of every slot, with the method, the decoded arguments and (after) the
    /// result: for tracing. Does not throw; stops when the token is cancelled or deinitialized.
    public func observeAll(
        _ timing: ObservationTiming = .after, owner: AnyObject? = nil, _ body: @escaping @Sendable (ObservedCall) -> Void
    ) -> ObservationToken {
        let observer = Observer(timing: timing, owner: owner, delegate: self, registers: nil) { plan, result, arguments in
            body(ObservedCall(method: plan.methodName, signature: plan.prepared.signature, result: result, arguments: arguments))
        }
        for index in descriptor.methods.indices {
            do {
                try ensureDispatcher(index)
            } catch {
                misuse("observeAll could not make a dispatcher for '\(descriptor.methods[index].name)': \(error)")
            }
        }
        state.withLock { state in
            for index in descriptor.methods.indices {
                state.slots[index].observers.append(observer)
                republish(index, &state)
            }
        }
        for index in descriptor.methods.indices { sweep(index) }
        return ObservationToken([observer])
    }

    @usableFromInline
    func addObserver(
        _ method: String, _ timing: ObservationTiming, owner: AnyObject?, arguments: [CType], result: CType?,
        registers: Observer.RegisterBody? = nil, body: @escaping Observer.Body
    ) throws -> ObservationToken {
        let index = try descriptor.methodIndex(of: method)
        let expected = descriptor.methods[index].signature
        try checkSignature(CSignature(result ?? expected.returnType, arguments), of: index)
        try ensureDispatcher(index)
        let observer = Observer(timing: timing, owner: owner, delegate: self, registers: registers, body: body)
        state.withLock { state in
            state.slots[index].observers.append(observer)
            republish(index, &state)
        }
        sweep(index)
        return ObservationToken([observer])
    }

    /// Takes the observer out of every slot, then waits for the calls that may still be notifying it.
    func removeObserver(_ observer: Observer) {
        let running = state.withLock { state in
            var running: [(slot: Int, objects: [any Retirable])] = []
            for index in state.slots.indices where state.slots[index].observers.contains(where: { $0 === observer }) {
                state.slots[index].observers.removeAll { $0 === observer }
                republish(index, &state)
                running.append((index, retire([], slot: index, &state)))
            }
            return running
        }
        for (index, objects) in running { settle(objects, slot: index) }
    }
}

/// One call as ``DynamicDelegate/observeAll(_:owner:_:)`` reports it.
public struct ObservedCall: Sendable, CustomStringConvertible {
    /// The method called.
    public let method: String
    /// Its C signature.
    public let signature: CSignature
    /// The arguments, decoded by their C types.
    public let arguments: [CArgumentValue]
    /// The result C receives; nil before the implementation runs and for `void` methods.
    public let returnValue: CArgumentValue?

    init(method: String, signature: CSignature, result: UnsafeMutableRawPointer?, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        self.method = method
        self.signature = signature
        self.arguments = signature.argumentTypes.indices.map {
            CArgumentValue(UnsafeRawPointer(arguments[$0].unsafelyUnwrapped), signature.argumentTypes[$0])
        }
        if let result, signature.returnType != .void {
            returnValue = CArgumentValue(UnsafeRawPointer(result), signature.returnType)
        } else {
            returnValue = nil
        }
    }

    /// `read(0x…, 0x…, 4096) -> 17`.
    public var description: String {
        "\(method)(\(arguments.map(\.description).joined(separator: ", ")))" + (returnValue.map { " -> \($0)" } ?? "")
    }
}

/// A C value copied out of a call for inspection.
public enum CArgumentValue: Sendable, Hashable, CustomStringConvertible {
    /// `bool`.
    case bool(Bool)
    /// A signed integer of any width.
    case signed(Int64)
    /// An unsigned integer of any width (`size_t` too).
    case unsigned(UInt64)
    /// `float`, `double` or `long double`, as a `Double`.
    case floatingPoint(Double)
    /// A pointer's address (0 for NULL).
    case pointer(UInt)
    /// A struct's bytes.
    case bytes([UInt8])

    init(_ address: UnsafeRawPointer, _ type: CType) {
        switch type {
        case .bool: self = .bool(address.load(as: Bool.self))
        case .int8: self = .signed(Int64(address.load(as: Int8.self)))
        case .int16: self = .signed(Int64(address.loadUnaligned(as: Int16.self)))
        case .int32: self = .signed(Int64(address.loadUnaligned(as: Int32.self)))
        case .int64: self = .signed(address.loadUnaligned(as: Int64.self))
        case .uint8: self = .unsigned(UInt64(address.load(as: UInt8.self)))
        case .uint16: self = .unsigned(UInt64(address.loadUnaligned(as: UInt16.self)))
        case .uint32: self = .unsigned(UInt64(address.loadUnaligned(as: UInt32.self)))
        case .uint64, .size: self = .unsigned(address.loadUnaligned(as: UInt64.self))
        case .float: self = .floatingPoint(Double(address.loadUnaligned(as: Float.self)))
        case .double: self = .floatingPoint(address.loadUnaligned(as: Double.self))
        case .longDouble:
            #if arch(x86_64)
            self = .floatingPoint(Double(address.loadUnaligned(as: Float80.self)))
            #else
            self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: type.size)))
            #endif
        case .pointer: self = .pointer(UInt(bitPattern: address.loadUnaligned(as: UnsafeRawPointer?.self)))
        case .void, .structure: self = .bytes(Array(UnsafeRawBufferPointer(start: address, count: type.size)))
        }
    }

    /// The value as C's printf would show it: `42`, `0.5`, `0x7f…`, `NULL`, `{16 bytes}`.
    public var description: String {
        switch self {
        case .bool(let value): return value ? "true" : "false"
        case .signed(let value): return "\(value)"
        case .unsigned(let value): return "\(value)"
        case .floatingPoint(let value): return "\(value)"
        case .pointer(let address): return address == 0 ? "NULL" : "0x" + String(address, radix: 16)
        case .bytes(let bytes): return "{\(bytes.count) bytes}"
        }
    }
}
