// cffi_enter, cffi_leave and cffi_forget_abandoned_calls record or judge the frame they are inlined into,
// so this file calls them itself rather than through RetirementShim (see there).
import CDelegateKitRetirement

import Synchronization

/// The cell a slot's dispatcher reads its current plan from.
final class PlanCell: @unchecked Sendable {  // Atomic is safe to share; Swift does not mark it Sendable for pointer values.
    let plan = Atomic<UnsafeRawPointer?>(nil)

    /// The dispatcher: the C function a slot holds whenever a call needs more than one closure. libffi
    /// hands it the cell directly, so a dispatched call adds one atomic load and no closure call.
    static func dispatcher(for cell: PlanCell, signature: CSignature) throws -> CClosure {
        try CClosure(
            prepared: PreparedSignature.prepared(signature), body: { _, _ in }, handler: entry, target: cell,
            registerEntry: registerEntry)
    }

    /// ``entry`` in register form.
    private static let registerEntry: TrampolineShim.Entry = { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
        Unmanaged<PlanCell>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { cell in
            while true {
                let plan = cell.plan.load(ordering: .sequentiallyConsistent).unsafelyUnwrapped
                cffi_enter(plan)
                if cell.plan.load(ordering: .sequentiallyConsistent) == plan {
                    let result = Unmanaged<SlotPlan>.fromOpaque(plan)._withUnsafeGuaranteedRef { plan in
                        // The common `.stable` case passes the registers on as they came.
                        if let only = plan.only {
                            return Unmanaged<PlainClosure>.fromOpaque(only)._withUnsafeGuaranteedRef {
                                $0.registers.call(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                            }
                        }
                        return plan.run(ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7))
                    }
                    cffi_leave()
                    return result.registers
                }
                cffi_leave()
            }
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
