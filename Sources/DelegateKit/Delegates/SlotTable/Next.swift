import Synchronization

/// What lies below an override in its slot, to call from inside the override.
///
/// Calling it runs the implementation below; if there is none, the wrapped table's original function;
/// else the forwarding target's; else it returns the method's default value (zero, NULL, an all-zero
/// struct). Valid only during the call it was given to.
///
/// ```swift
/// try d.override("read") { (next: Next<UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int, Int>,
///                           cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
///     let count = next(cookie, buffer, n)
///     print("read \(count) bytes")
///     return count
/// }
/// ```
public struct Next<each A: CValue, R> {
    @usableFromInline let context: CallContext
    /// Lays the arguments out for libffi and runs what lies below; made once per override, for its arity.
    @usableFromInline let forward: (CallContext, repeat each A) -> R

    @inlinable
    init(_ context: CallContext, _ forward: @escaping (CallContext, repeat each A) -> R) {
        self.context = context
        self.forward = forward
    }

    /// Whether anything lies below: an implementation, the original, or a forwarding target that
    /// implements the method. When false, calling returns the default value.
    public var isAvailable: Bool { context.isAvailable }

    /// Removes the implementation that received this `Next` (REKit's `removeCurrentBlock`). It finishes
    /// the call it is running and is released as that call returns; later calls no longer reach it.
    public func removeCurrentImplementation() { context.removeCurrentImplementation() }

    /// Calls what lies below with these arguments and returns its result.
    @inlinable @inline(__always)
    public func callAsFunction(_ argument: repeat each A) -> R {
        forward(context, repeat each argument)
    }
}

/// What lies below, called with arguments of any count: the general form of the generated
/// fixed-arity forwards.
@inlinable
func forwardAnyArity<each A: CValue, R>(_ context: CallContext, _ argument: repeat each A) -> R {
    withArgumentArray(repeat each argument) { arguments in
        withUnsafeTemporaryAllocation(byteCount: max(MemoryLayout<R>.size, 16), alignment: 16) { result in
            context.invoke(result.baseAddress.unsafelyUnwrapped, arguments)
            return UnsafeRawPointer(result.baseAddress.unsafelyUnwrapped).loadUnaligned(as: R.self)
        }
    }
}

/// Where a running override sits: which plan of its slot, and the level below it.
///
/// Two words, so that a ``Next`` (this and its forwarding function) travels in registers: the override's
/// own implementation is the step above ``level``, read only by the rare ``removeCurrentImplementation()``.
@frozen @usableFromInline
struct CallContext {
    // Unmanaged: a context lives only during a call, while the slot keeps plan and implementation alive,
    // and a call must not count references.
    @usableFromInline let plan: Unmanaged<SlotPlan>
    /// The first step a call from here may run: the override holding this context is the step above.
    @usableFromInline let level: Int

    @inlinable @inline(__always)
    init(plan: Unmanaged<SlotPlan>, level: Int) {
        self.plan = plan
        self.level = level
    }

    @inlinable @inline(__always)
    func invoke(_ result: UnsafeMutableRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        plan._withUnsafeGuaranteedRef { $0.invoke(from: level, result, arguments) }
    }

    var isAvailable: Bool { plan._withUnsafeGuaranteedRef { $0.isAvailable(from: level) } }

    /// The typed closure of the layer a call from here runs, when it has the very Swift types of the
    /// override calling (see ``SlotPlan/Step/fromAbove``), and whether it is plain or an override.
    @inlinable @inline(__always)
    var typedBelow: (entry: Unmanaged<TypedEntry>, kind: SlotPlan.TypedCall)? {
        plan._withUnsafeGuaranteedRef { plan in
            guard level < plan.steps.count else { return nil }
            let step = plan.steps.baseAddress.unsafelyUnwrapped + level
            let kind = SlotPlan.TypedCall(rawValue: step.pointee.fromAbove.load(ordering: .relaxed)).unsafelyUnwrapped
            guard kind != .none else { return nil }
            return (step.pointee.typed.unsafelyUnwrapped, kind)
        }
    }

    /// The wrapped original, when a call from here reaches it with nothing between and in register form
    /// (see ``SlotPlan/originalInRegisters``): `next` then calls it directly.
    @inlinable @inline(__always)
    var originalBelow: UnsafeRawPointer? {
        plan._withUnsafeGuaranteedRef { level >= $0.steps.count ? $0.originalInRegisters : nil }
    }

    /// Runs what lies below in register form, when the slot's plan runs in registers and its signature
    /// puts the arguments where `classes` (the caller's Swift types, see ``RegisterLayout/classes``) says:
    /// a layer below is then called without laying the arguments out, and the wrapped original or a
    /// forwarding target's function with a direct call. Nil when the caller must take another way.
    /// The registers come by value (see ``ArgumentRegisters/Integers``).
    @usableFromInline
    func invoke(classes: Int, _ integers: ArgumentRegisters.Integers, _ sse: ArgumentRegisters.SSE) -> RegisterResult? {
        plan._withUnsafeGuaranteedRef { plan in
            guard plan.runsInRegisters, plan.prepared.registerLayout.unsafelyUnwrapped.classes == classes else { return nil }
            return plan.invoke(from: level, ArgumentRegisters(integers, sse))
        }
    }

    /// The context of a call made by the layer below this one.
    @inlinable @inline(__always)
    var below: CallContext { CallContext(plan: plan, level: level + 1) }

    func removeCurrentImplementation() {
        plan._withUnsafeGuaranteedRef { plan in
            plan.owner?.remove(plan.steps[level - 1].implementation.takeUnretainedValue(), slot: plan.slot)
        }
    }
}
