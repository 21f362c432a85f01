// cffi_leave_outermost ends the call of the thread's record that the caller's entry made, so this file
// calls it itself rather than through RetirementShim (see there).
import CDelegateKitRetirement

/// The end of a thread's outermost call that has more to do than leave (see `cffi_leave_fast`): forgetting
/// calls above it that a `longjmp` left, collecting what a remover deferred, taking a requested exit.
///
/// A register entry calls it last and out of line, so that its common path keeps the result in no
/// callee-saved register. The call has stored NULL already, so its entry's frame may be gone.
@inline(never)
func leavingOutermostCall(_ result: RegisterResult) -> RegisterResult {
    cffi_leave_outermost()
    return result
}
