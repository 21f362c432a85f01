/// One piece of C-callable code: a slot of DelegateKit's trampoline table that enters a libffi closure's
/// handler, or, where the signature takes the register path, its register entry (see ``RegisterPath``).
///
/// The one place such code is made and let go, for ``CClosure`` and ``SlotStub`` alike: a debug build
/// keeps a dead closure's slot pointed at an entry that stops with a message (see ``Graveyard``).
struct ClosureCode: @unchecked Sendable {  // A pointer to the code's handle, which only `free` touches.
    /// The trampoline slot (register path) with its lowest bit set, or the libffi closure (see
    /// ``LibffiShim/makeClosure(_:handler:userData:code:)``): both are at least 16-aligned. One word, where
    /// a handle, the address and a flag took three, and made every ``CClosure`` 16 bytes larger.
    private let handle: UnsafeMutableRawPointer

    /// Whether C enters through the register entry (else through libffi's handler).
    var entersInRegisters: Bool { UInt(bitPattern: handle) & 1 != 0 }

    /// The trampoline slot or the libffi closure.
    private var closure: UnsafeMutableRawPointer { entersInRegisters ? handle - 1 : handle }

    /// Where C calls.
    var address: UnsafeRawPointer { entersInRegisters ? TrampolineShim.code(closure) : LibffiShim.code(closure) }

    /// Code of `prepared`'s signature entering `handler` (or `registerEntry`, when given and the signature
    /// takes registers) with `userData`. Throws ``DelegateError/closureAllocationFailed(_:)``.
    init(
        _ prepared: PreparedSignature, handler: LibffiShim.Handler, registerEntry: RegisterEntry?,
        userData: UnsafeMutableRawPointer?
    ) throws {
        var code: UnsafeMutableRawPointer?
        if let entry = registerEntry?.address(floatingResult: prepared.returnsFloatingPoint), RegisterPath.entersInRegisters(prepared),
           let slot = TrampolineShim.makeSlot(entry, context: userData, code: &code) {
            handle = slot + 1
            return
        }
        // No register slot (none could be mapped): libffi's entry serves every signature.
        guard let made = LibffiShim.makeClosure(prepared.cif, handler: handler, userData: userData, code: &code), code != nil else {
            throw DelegateError.closureAllocationFailed(prepared.signature)
        }
        handle = made
    }

    /// The context calls receive, for code entering in registers; nil for libffi's.
    var userData: UnsafeMutableRawPointer? { entersInRegisters ? TrampolineShim.context(closure) : nil }

    /// Sets the user data calls receive, for an owner that exists only once the code does. Before C can
    /// call the code: nothing orders this write against a call already running.
    func setUserData(_ userData: UnsafeMutableRawPointer?) {
        if entersInRegisters {
            TrampolineShim.setContext(closure, userData)
        } else {
            LibffiShim.setUserData(closure, userData)
        }
    }

    /// Lets the code go: freed in a release build; in a debug build kept, stopping every later call with
    /// `epitaph` (a C caller that kept the pointer is a bug worth a clear message).
    func free(epitaph: @autoclosure () -> String) {
        #if DEBUG
        Graveyard.bury(self, message: epitaph())
        #else
        release()
        #endif
    }

    /// ``free(epitaph:)`` with a message that lives for ever, which the graveyard keeps as it is.
    func free(lastingEpitaph: @autoclosure () -> UnsafePointer<CChar>) {
        #if DEBUG
        Graveyard.bury(self, lastingMessage: lastingEpitaph())
        #else
        release()
        #endif
    }

    /// Frees the code at once: C must not call it any more.
    func release() {
        if entersInRegisters {
            TrampolineShim.free(closure)
        } else {
            LibffiShim.freeClosure(closure)
        }
    }

    /// Points the code at an entry that prints `message` and stops; `message` must outlive it.
    func bury(message: UnsafePointer<CChar>) {
        if entersInRegisters {
            TrampolineShim.bury(closure, message: message)
        } else {
            LibffiShim.bury(closure, message: message)
        }
    }
}
