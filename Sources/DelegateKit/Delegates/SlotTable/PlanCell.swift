// cffi_enter_fast, cffi_enter and cffi_leave record or find a call by the frame they are inlined into, so
// this file calls them itself, with cffi_leave_fast and cffi_leave_outermost, rather than through
// RetirementShim (see there). It also names its register entries as SlotStub.h declares them to C
// (cffi_dispatcher_integer_entry, cffi_dispatcher_floating_entry).
import CDelegateKitRetirement

import Synchronization

/// The cell a slot's dispatcher reads its current plan from.
final class PlanCell: @unchecked Sendable {  // Atomic is safe to share; Swift does not mark it Sendable for pointer values.
    let plan = Atomic<UnsafeRawPointer?>(nil)

    /// The dispatcher: the C function a slot holds whenever a call needs more than one closure. libffi
    /// hands it the cell directly, so a dispatched call adds one atomic load and no closure call.
    static func dispatcher(for cell: PlanCell, signature: CSignature) throws -> CClosure {
        // The body is never run; it holds the cell, which calls receive unretained.
        try CClosure(
            CallThunk(prepared: PreparedSignature.prepared(signature)) { [cell] _, _ in _ = cell }, handler: entry,
            handlerData: Unmanaged.passUnretained(cell).toOpaque(), registerEntry: registerEntry)
    }

    /// ``entry`` in register form, the cell being the context. Its forms are the functions below
    /// ``PlanCell``, which C enters by name (`SlotStub.h`).
    private static let registerEntry = RegisterEntry(integer: cffi_dispatcher_integer_entry, floating: cffi_dispatcher_floating_entry)

    /// Each form of ``registerEntry``'s call. As in `SlotStub`'s, only the thread's outermost call, on a
    /// plan still the cell's, is made here; each rare path is a call made last, so that this frame keeps
    /// nothing across a call but the thread's record.
    @inline(__always)
    fileprivate static func enter(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        // Casts, not `unsafelyUnwrapped` (see SlotStub.enter: a debug build would call its generic getter).
        let cell = Unmanaged<PlanCell>.fromOpaque(unsafeBitCast(context, to: UnsafeMutableRawPointer.self))
        let plan = cell._withUnsafeGuaranteedRef { unsafeBitCast($0.plan.load(ordering: .sequentiallyConsistent), to: UnsafeRawPointer.self) }
        guard let calls = cffi_enter_fast(plan) else {
            return dispatchingNested(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7)
        }
        guard cell._withUnsafeGuaranteedRef({ $0.plan.load(ordering: .sequentiallyConsistent) }) == plan else {
            return dispatchingAfterReplacement(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7, calls)
        }
        let result = run(plan, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
        guard cffi_leave_fast(calls) == 0 else { return leavingOutermostCall(result) }
        return result
    }

    /// The whole call, entered by `cffi_enter` (nested calls, a thread's first, calls after a `longjmp`),
    /// in its own frame, the one recorded; it loads the plan again when one replaced it in between.
    @inline(never)
    private static func dispatchingNested(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        Unmanaged<PlanCell>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { cell in
            while true {
                let plan = cell.plan.load(ordering: .sequentiallyConsistent).unsafelyUnwrapped
                cffi_enter(plan)
                if cell.plan.load(ordering: .sequentiallyConsistent) == plan {
                    let result = run(plan, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                    cffi_leave()
                    return result
                }
                cffi_leave()
            }
        }
    }

    /// An outermost call whose plan was replaced between its load and its record: it leaves, and starts
    /// over. It touches nothing of the plan, which may be gone already.
    @inline(never)
    private static func dispatchingAfterReplacement(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double,
        _ calls: UnsafeMutablePointer<cffi_thread_calls>
    ) -> RegisterResult {
        if cffi_leave_fast(calls) != 0 { cffi_leave_outermost() }
        return dispatchingNested(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7)
    }

    /// A dispatched call of `plan`, recorded as running: the common `.stable` case passes the registers on
    /// as they came. (A plan of several closures is run inline too: out of line it costs more than the
    /// registers it saves.)
    @inline(__always)
    private static func run(
        _ plan: UnsafeRawPointer, _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        Unmanaged<SlotPlan>.fromOpaque(plan)._withUnsafeGuaranteedRef { plan in
            if let only = plan.only {
                return Unmanaged<Implementation>.fromOpaque(only)._withUnsafeGuaranteedRef {
                    $0.registers.call(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                }
            }
            return plan.run(ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7))
        }
    }

    private static let entry: LibffiShim.Handler = { _, result, arguments, userData in
        Unmanaged<PlanCell>.fromOpaque(userData.unsafelyUnwrapped)._withUnsafeGuaranteedRef { cell in
            // A hazard pointer: a replaced plan is freed once no thread records it as running, so the
            // plan is recorded first and only then checked to be still the cell's, before it is touched.
            // A plan replaced in between may be gone already; its replacement is in the cell. (Both
            // loads and the cell's store are sequentially consistent, against `cffi_enter`'s store.)
            while true {
                let plan = cell.plan.load(ordering: .sequentiallyConsistent).unsafelyUnwrapped
                cffi_enter(plan)
                if cell.plan.load(ordering: .sequentiallyConsistent) == plan {
                    Unmanaged<SlotPlan>.fromOpaque(plan)._withUnsafeGuaranteedRef {
                        $0.run(result.unsafelyUnwrapped, arguments ?? noArguments)
                    }
                    cffi_leave()
                    return
                }
                cffi_leave()
            }
        }
    }
}

// The forms of a dispatcher's register entry (`PlanCell.registerEntry`). `cffi_enter_fast` records the
// frame of the function it is inlined into: these, which C enters directly.

@_silgen_name("delegatekit_dispatcher_integer_entry")
func dispatcherIntegerEntry(
    _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
    _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
) -> UInt64 {
    PlanCell.enter(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7).integer
}

@_silgen_name("delegatekit_dispatcher_floating_entry")
func dispatcherFloatingEntry(
    _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
    _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
) -> Double {
    PlanCell.enter(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7).sse
}
