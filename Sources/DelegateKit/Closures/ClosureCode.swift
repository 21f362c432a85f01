/// One piece of C-callable code: a libffi closure entering a handler, or, where the signature takes the
/// register path, a register-path closure entering its register entry (see ``RegisterPath``).
///
/// The one place such code is made and let go, for ``CClosure`` and ``SlotStub`` alike: a debug build
/// keeps the code of a dead closure mapped and makes it stop with a message (see ``Graveyard``).
struct ClosureCode: @unchecked Sendable {  // Pointers to code and to libffi's closure, which only `free` touches.
    /// What libffi allocated, for ``LibffiShim/freeClosure(_:)`` (or the graveyard).
    let closure: UnsafeMutableRawPointer
    /// Where C calls.
    let address: UnsafeRawPointer
    /// Whether C enters through the register entry (else through libffi's handler).
    let entersInRegisters: Bool
    /// Whether the code is a slot of DelegateKit's own trampoline pages (see ``RegisterPath/usesOwnPages``),
    /// not libffi's closure memory.
    let inOwnPage: Bool

    /// Code of `prepared`'s signature entering `handler` (or `registerEntry`, when given and the signature
    /// takes registers) with `userData`. Throws ``DelegateError/closureAllocationFailed(_:)``.
    init(
        _ prepared: PreparedSignature, handler: LibffiShim.Handler, registerEntry: TrampolineShim.Entry?,
        userData: UnsafeMutableRawPointer?
    ) throws {
        var code: UnsafeMutableRawPointer?
        let made: UnsafeMutableRawPointer?
        if let registerEntry, RegisterPath.entersInRegisters(prepared) {
            let page = RegisterPath.usesOwnPages ? TrampolineShim.makeInPage(registerEntry, context: userData, code: &code) : nil
            made = page ?? TrampolineShim.makeInClosureMemory(registerEntry, context: userData, code: &code)
            entersInRegisters = true
            inOwnPage = page != nil
        } else {
            made = LibffiShim.makeClosure(prepared.cif, handler: handler, userData: userData, code: &code)
            entersInRegisters = false
            inOwnPage = false
        }
        guard let made, let code else { throw DelegateError.closureAllocationFailed(prepared.signature) }
        closure = made
        address = UnsafeRawPointer(code)
    }

    /// Sets the user data calls receive, for an owner that exists only once the code does. Before C can
    /// call the code: nothing orders this write against a call already running.
    func setUserData(_ userData: UnsafeMutableRawPointer?) {
        if inOwnPage {
            TrampolineShim.setPageContext(closure, userData)
        } else {
            LibffiShim.setUserData(closure, userData)
        }
    }

    /// Lets the code go: freed in a release build; in a debug build kept, stopping every later call with
    /// `epitaph` (a C caller that kept the pointer is a bug worth a clear message).
    func free(_ prepared: PreparedSignature, epitaph: @autoclosure () -> String) {
        if inOwnPage { return TrampolineShim.freeInPage(closure) }  // only release builds use the pages
        #if DEBUG
        Graveyard.bury(closure: closure, code: address, prepared: prepared, message: epitaph())
        #else
        LibffiShim.freeClosure(closure)
        #endif
    }
}
