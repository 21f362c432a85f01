import CDelegateKitExits
import Glibc

/// The C half of leaving a callback (`CFFIShim/Exits/`): the thread's requested exit, taken by
/// DelegateKit's entry once the closure has returned, and the `setjmp` site a `longjmp` lands at. It knows
/// nothing of the records of calls in progress: its callers note a request there
/// (``RetirementShim/noteExitRequest()``) and forget the calls a jump skipped
/// (``RetirementShim/forgetCalls(from:)``).
enum CallbackExitShim {
    /// Asks this thread's callback in progress to leave by `longjmp(target, value)` once its closure has
    /// returned to DelegateKit's entry (``takeRequestedExit()``).
    static func requestJump(to target: UnsafeMutablePointer<__jmp_buf_tag>, value: Int32) {
        cffi_exit_request_jump(target, value)
    }

    /// Asks to leave by calling `function` as `cif` describes with `arguments` (libffi's form, copied now);
    /// false when they do not fit in a request.
    static func requestCall(
        _ cif: UnsafeMutablePointer<LibffiShim.CallInterface>, _ function: UnsafeRawPointer,
        _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        cffi_exit_request_call(cif, function, arguments) == 0
    }

    /// The most bytes of argument values and of result a requested call may have.
    static var requestedCallCapacity: (arguments: Int, result: Int) {
        (Int(CFFI_EXIT_BYTES), Int(CFFI_EXIT_RESULT_BYTES))
    }

    /// Takes this thread's requested exit, if any (then it never returns): what an entry of a closure
    /// that may leave does last, from a frame that holds nothing to clean up.
    static func takeRequestedExit() {
        cffi_exit_take()
    }

    /// Calls `function` as `cif` describes at a `setjmp` site of `target`: 0 when it returned, else the
    /// value given to `longjmp` (the caller forgets the calls the jump skipped).
    static func callCatchingJump(
        to target: UnsafeMutablePointer<__jmp_buf_tag>, _ cif: UnsafeMutablePointer<LibffiShim.CallInterface>,
        _ function: UnsafeRawPointer, _ result: UnsafeMutableRawPointer,
        _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Int32 {
        cffi_call_catching_jump(target, cif, function, result, arguments)
    }
}
