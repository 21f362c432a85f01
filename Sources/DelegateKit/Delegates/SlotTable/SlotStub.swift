// cffi_enter_fast, cffi_enter and cffi_leave record or find a call by the frame they are inlined into, so
// this file calls them itself, with cffi_leave_fast, rather than through RetirementShim (see there). It
// also names its register entries as SlotStub.h declares them to C (cffi_slot_stub_integer_entry,
// cffi_slot_stub_floating_entry).
import CDelegateKitRetirement

/// The C function a slot holds for a plain implementation: a closure that enters through a `cffi_guard`
/// (by libffi's entry, or by the register path's, see ``RegisterPath``), owned by the slot and reused by
/// its later implementations.
///
/// A C library may keep a function pointer it loaded from a table for as long as it likes (`fopencookie`
/// copies the whole table) and call it after the implementation behind it was removed. So the code at
/// that address must stay callable, but it need not keep the removed closure: once retired and no longer
/// running, the stub holds nothing of the user's (its guard forwards every call to what the slot holds
/// now), and the slot's next plain implementation takes it over. A slot thus owns at most as many stubs as
/// it ever had plain implementations at once (plus those whose removed closures calls still run), whatever the churn.
///
/// The guard is published (runs its handler) exactly while the slot holds this stub's address, so a
/// stale call always reaches what the slot holds now: the implementation bound here if it is the one C
/// would load, else the slot's current function.
///
/// The guard is the object's one tail element, so that a stub is one allocation: C reads it at a fixed
/// address for as long as the stub lives (it is the code's context), which only memory the object owns
/// itself gives. Everything else the stub holds is the buffer's header (``Parts``): a subclass's own stored
/// properties are not initialized by `create`.
final class SlotStub: ManagedBuffer<SlotStub.Parts, RetirementShim.Guard> {
    // Mutated only under its delegate's lock, while retired and idle.

    /// What the stub holds besides its guard.
    struct Parts {
        /// The C-callable code's address, read on every change of the slot: kept, as finding it from
        /// ``code`` made each change dearer than the word it takes.
        let address: UnsafeRawPointer
        let code: ClosureCode
        /// ``SlotStub/isPublished``.
        var isPublished = false
        #if DEBUG
        /// The first implementation's signature (every signature the slot accepts is laid out alike), for
        /// the message of a call after the delegate is gone: only a debug build buries code with one.
        let prepared: PreparedSignature
        var epitaph: String?
        #endif
    }

    /// A stub of `slot`, retired, for implementations laid out as `prepared`.
    static func make(slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>, prepared: PreparedSignature) throws -> SlotStub {
        // The code first, without its context: `create` cannot undo a header whose making failed, and the
        // guard's address exists only once the object does. Nothing calls the code before it is published.
        let code = try ClosureCode(prepared, handler: RetirementShim.guardedEntry, registerEntry: SlotStub.registerEntry, userData: nil)
        let stub = unsafeDowncast(
            SlotStub.create(minimumCapacity: 1) { _ in
                #if DEBUG
                Parts(address: code.address, code: code, prepared: prepared)
                #else
                Parts(address: code.address, code: code)
                #endif
            },
            to: SlotStub.self)
        stub.guardian.initialize(to: RetirementShim.retiredGuard(of: UnsafePointer(slot)))
        code.setUserData(UnsafeMutableRawPointer(stub.guardian))
        return stub
    }

    deinit {
        #if DEBUG
        let parts = self.parts.pointee
        parts.code.free(epitaph: parts.epitaph
            ?? "DelegateKit: a slot `\(parts.prepared.signature)` was called after its delegate was deinitialized")
        #else
        code.release()  // what `free` does in a release build, which never reads the message
        #endif
    }

    /// The header, through a pointer: the `header` property is a class's stored `var`, whose every access
    /// is checked for exclusivity at run time.
    private var parts: UnsafeMutablePointer<Parts> { withUnsafeMutablePointerToHeader { $0 } }

    /// The guard C enters through: the code's context, and a call's running identity.
    var guardian: UnsafeMutablePointer<RetirementShim.Guard> { withUnsafeMutablePointerToElements { $0 } }

    /// The C-callable code.
    var address: UnsafeRawPointer { parts.pointee.address }

    private var code: ClosureCode { parts.pointee.code }

    /// Whether the guard runs its handler, i.e. the slot holds ``address``; under the delegate's lock.
    var isPublished: Bool { parts.pointee.isPublished }

    /// What a call after the delegate is gone reports in a debug build (see ``Graveyard``).
    var epitaph: String? {
        get {
            #if DEBUG
            parts.pointee.epitaph
            #else
            nil
            #endif
        }
        set {
            #if DEBUG
            parts.pointee.epitaph = newValue
            #endif
        }
    }

    /// Makes calls run `body` once published. Only while retired and idle: no call reads the guard's
    /// handler then, and publishing orders these writes before any call that sees the guard published.
    func bind(_ body: Implementation) {
        if code.entersInRegisters {
            // The register entry (`enterStub`) reads the user data as the closure itself.
            guardian.pointee.handler = Implementation.entry
            guardian.pointee.user_data = Unmanaged.passUnretained(body).toOpaque()
        } else {
            (guardian.pointee.handler, guardian.pointee.user_data) = body.libffiHandler
        }
        #if DEBUG
        let words = body.registers.words  // valid while `body` holds its register form
        guardian.pointee.registers = (words.code, words.context)
        #endif
    }

    /// Forgets the closure, once retired and idle, so that nothing here refers to the user's closure.
    func unbind() {
        guardian.pointee.handler = nil
        guardian.pointee.user_data = nil
        guardian.pointee.registers = (nil, nil)
    }

    /// Lets calls run the bound closure: call before the slot points at ``address``.
    func publish() {
        guard !isPublished else { return }
        parts.pointee.isPublished = true
        RetirementShim.publish(guardian)
    }

    /// Sends calls on to what the slot holds: call after the slot stopped pointing at ``address``.
    func retire() {
        parts.pointee.isPublished = false
        RetirementShim.retire(guardian)
    }

    var runningIdentity: UnsafeRawPointer { UnsafeRawPointer(guardian) }

    /// `cffi_guarded_entry` in register form: the guard is the context. Its forms are the functions below
    /// ``SlotStub``, which C enters by name (`SlotStub.h`).
    private static let registerEntry = RegisterEntry(integer: cffi_slot_stub_integer_entry, floating: cffi_slot_stub_floating_entry)

    /// The whole call, entered by `cffi_enter`: nested calls, a thread's first, calls after a `longjmp`.
    /// Its own frame is the one recorded.
    @inline(never)
    fileprivate static func enteringNested(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        let guardian = unsafeBitCast(context, to: UnsafeMutablePointer<RetirementShim.Guard>.self)
        cffi_enter(guardian)
        let result = run(guardian, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
        // In this function's own frame, not in a `defer`: a debug build makes a defer's body a function
        // of its own, and cffi_leave finds the call it ends by the frame cffi_enter recorded.
        cffi_leave()
        return result
    }

    /// What an entered call runs: the bound closure while the stub is published, else what the slot holds.
    @inline(__always)
    fileprivate static func run(
        _ guardian: UnsafeMutablePointer<RetirementShim.Guard>, _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64,
        _ i4: UInt64, _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        if RetirementShim.isPublished(guardian) {
            return Unmanaged<Implementation>.fromOpaque(unsafeBitCast(guardian.pointee.user_data, to: UnsafeMutableRawPointer.self))._withUnsafeGuaranteedRef {
                $0.registers.call(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
            }
        }
        return forward(i0, i1, i2, i3, i4, guardian, d0, d1, d2, d3, d4, d5, d6, d7)
    }

    /// A call that found its stub retired: it behaves as if C had loaded the slot a moment later. Out of
    /// line, and given the registers where they came (the guard where the context was), so that the
    /// common path neither moves nor stores any.
    @inline(never)
    fileprivate static func forward(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64,
        _ guardian: UnsafeMutablePointer<RetirementShim.Guard>, _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        guard let function = RetirementShim.load(guardian.pointee.slot) else { return .zero }
        return ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7).call(function)
    }
}

/// Each form of ``SlotStub``'s register entry's call: a free function, since only such a function can be
/// `@_transparent`, which a debug build inlines too (into the entries below, whose frame it records).
///
/// Only the common call, the thread's outermost, is made here (`cffi_enter_fast`); every rare path is
/// a call made last, which needs nothing of this frame afterwards. So this function keeps neither the
/// arguments nor the result across a call, only the thread's record, and a C library's call costs
/// little more than a closure's.
@_transparent
fileprivate func enterStub(
    _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
    _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
) -> RegisterResult {
    // Casts, not `unsafelyUnwrapped`, whose getter is generic: a debug build calls it, with its value
    // witnesses, on every call (about a hundred instructions); both compile to nothing when optimized.
    let guardian = unsafeBitCast(context, to: UnsafeMutablePointer<RetirementShim.Guard>.self)
    guard let calls = cffi_enter_fast(guardian) else {
        return SlotStub.enteringNested(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7)
    }
    #if DEBUG
    // Unoptimized, each Swift frame costs: the published call is made from here, by C reading the bound
    // closure's words (no copy of it, so no retain and release), and `run` is left to the rare paths.
    let result = cffi_guard_is_published(guardian) != 0
        ? RegisterResult(cffi_guard_call_registers(guardian, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7))
        : SlotStub.forward(i0, i1, i2, i3, i4, guardian, d0, d1, d2, d3, d4, d5, d6, d7)
    #else
    let result = SlotStub.run(guardian, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
    #endif
    guard cffi_leave_fast(calls) == 0 else { return leavingOutermostCall(result) }
    return result
}

// The forms of a stub's register entry (`SlotStub.registerEntry`). `cffi_enter_fast` records the frame of
// the function it is inlined into: these, which C enters directly.

@_silgen_name("delegatekit_slot_stub_integer_entry")
func slotStubIntegerEntry(
    _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
    _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
) -> UInt64 {
    enterStub(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7).integer
}

@_silgen_name("delegatekit_slot_stub_floating_entry")
func slotStubFloatingEntry(
    _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
    _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
) -> Double {
    enterStub(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7).sse
}
