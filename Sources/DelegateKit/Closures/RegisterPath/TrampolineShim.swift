import CDelegateKitTrampolines

/// The code C calls (`CFFIShim/Trampolines/`): slots of DelegateKit's trampoline table, each
/// entering an entry with a context in a register, mapped read+execute from this binary beside their
/// data; and a direct call of C in registers. What the register path is, and when a closure takes it, is
/// ``RegisterPath``; libffi's closures take slots of their own through ``LibffiShim``.
///
/// This is the only file of the library that imports `CDelegateKitTrampolines` (`Scripts/check-layout.py`
/// holds every other file to that). `DirectEntry.swift`, whose public hooks `#CClosure`'s expansion
/// calls, spells the entries' C types in Swift instead: its signatures name no C type.
@usableFromInline
enum TrampolineShim {
    /// A register entry returning its result in the integer result register, and one returning it in
    /// the floating one (see ``RegisterEntry``): `(i0, i1, i2, i3, i4, context, d0, …, d7)`, the argument
    /// registers in place and the slot's context in the sixth integer register.
    @usableFromInline typealias IntegerEntry = cffi_integer_entry
    @usableFromInline typealias FloatingEntry = cffi_floating_entry

    /// The entry, of both forms, that calls a ``RegisterBody`` directly: its slot's context points at the
    /// body's ``RegisterBody/words`` (see `cffi_enter_register_body` in `Trampolines.h` for what it
    /// assumes of Swift's calling convention).
    static let bodyEntry = RegisterEntry(
        integer: cffi_enter_register_body,
        floating: unsafeBitCast(cffi_enter_register_body as IntegerEntry, to: FloatingEntry.self),
        contextIsBodyWords: true)

    /// The entries libffi's closures take in libffi's place where every argument lies in one place
    /// (`cffi_enter_array`, and on x86_64 `cffi_enter_array_composite` for a struct result; see
    /// `Trampolines.h`): what the tests find a slot entering.
    static var arrayEntries: [UnsafeRawPointer] {
        #if arch(x86_64)
        [cffi_enter_array, cffi_enter_array_composite].map { unsafeBitCast($0 as @convention(c) () -> Void, to: UnsafeRawPointer.self) }
        #else
        [unsafeBitCast(cffi_enter_array as @convention(c) () -> Void, to: UnsafeRawPointer.self)]
        #endif
    }

    /// Whether the register path runs in this process (decided once; see ``RegisterPath/isAvailable``).
    static var isAvailable: Bool { cffi_register_path_available() != 0 }

    /// Whether closures made on this thread enter through libffi for now (``RegisterPath/withLibffiEntry(_:)``).
    static var isSuppressedHere: Bool {
        get { cffi_register_path_suppressed() != 0 }
        set { cffi_register_path_suppress(newValue ? 1 : 0) }
    }

    /// A slot entering `entry` (an entry's form, ``RegisterEntry/address(floatingResult:)``) with
    /// `context` in the register the register path's entries take it in; nil when no slot can be had.
    /// Returns the slot's handle, and the code's address in `code`.
    static func makeSlot(
        _ entry: UnsafeRawPointer, context: UnsafeMutableRawPointer?, code: inout UnsafeMutableRawPointer?
    ) -> UnsafeMutableRawPointer? {
        cffi_trampoline_create(Int32(CFFI_TRAMPOLINE_REGISTERS), entry, context, &code)
    }

    /// The address C calls.
    static func code(_ handle: UnsafeMutableRawPointer) -> UnsafeRawPointer {
        UnsafeRawPointer(cffi_trampoline_code(handle).unsafelyUnwrapped)
    }

    /// The context a slot passes.
    static func context(_ handle: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        cffi_trampoline_context(handle)
    }

    /// Changes the context a slot passes, before C can call it.
    static func setContext(_ handle: UnsafeMutableRawPointer, _ context: UnsafeMutableRawPointer?) {
        cffi_trampoline_set_context(handle, context)
    }

    /// Points a slot whose owner is gone at an entry that prints `message` and stops the process;
    /// `message` must outlive the slot.
    static func bury(_ handle: UnsafeMutableRawPointer, message: UnsafePointer<CChar>) {
        cffi_trampoline_bury(handle, message)
    }

    /// Hands a slot back; C must not call its code any more.
    static func free(_ handle: UnsafeMutableRawPointer) {
        cffi_trampoline_free(handle)
    }

    /// Whether closures made on this thread convert their arguments by Swift type even in a debug build
    /// (``OpaqueBody/withoutOpaqueCalls(_:)``).
    static var opaqueCallsSuppressedHere: Bool {
        get { cffi_opaque_calls_suppressed() != 0 }
        set { cffi_opaque_calls_suppress(newValue ? 1 : 0) }
    }

    /// A call of `function` with `context`, a Swift function value in its most general form or, with
    /// `pack`, in pack form, through `cffi_call_opaque`: each argument's address in the block of argument
    /// registers is where `layout` puts it (at most six arguments in the most general form, thirteen as a
    /// pack), and a signed result narrower than 64 bits is sign-extended by `resultShift` bits. `owner` is
    /// kept as long as the call: what keeps `context` alive.
    static func opaqueCall(
        function: UnsafeRawPointer, context: UnsafeRawPointer?, layout: RegisterLayout, pack: Bool = false, resultShift: Int, owner: Any
    ) -> OpaqueCall {
        let call = OpaqueCall(owner)
        // The unused offsets 0, a valid one. Copied as bytes: a debug build makes one of these for every
        // typed closure of up to six arguments, and there building the offsets as an array padded to 14
        // ran generic code of 30,000 instructions a closure.
        call.record.initialize(to: cffi_opaque_call())
        call.record.pointee.function = function
        call.record.pointee.context = context
        call.record.pointee.result_shift = UInt64(resultShift)
        call.record.pointee.pack = pack ? UInt64(layout.argumentCount) : 0
        withUnsafeMutableBytes(of: &call.record.pointee.arguments) { layout.copyOffsets(to: $0) }
        return call
    }

    /// `cffi_call_opaque` as a register entry of both forms, whose context is an ``OpaqueCall``'s record:
    /// what a `CClosure` with such a call enters, with no Swift frame before the closure's own.
    static let opaqueEntry = RegisterEntry(
        integer: unsafeBitCast(cffi_call_opaque as OpaqueEntry, to: IntegerEntry.self),
        floating: unsafeBitCast(cffi_call_opaque as OpaqueEntry, to: FloatingEntry.self))

    private typealias OpaqueEntry = @convention(c) (
        UInt64, UInt64, UInt64, UInt64, UInt64, UnsafePointer<cffi_opaque_call>?,
        Double, Double, Double, Double, Double, Double, Double, Double
    ) -> cffi_registers

    /// Calls the pack-form closure whose two words are at `function` with libffi's `arguments` as its
    /// pack, its result written at `result` (``PackFunction``).
    static func callPack(
        _ function: UnsafeRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ result: UnsafeMutableRawPointer
    ) {
        cffi_call_pack(function, arguments, result)
    }

    /// Calls the closure of `count` parameters in its most general form whose two words are at
    /// `function` with each of libffi's `arguments` as a parameter, its result written at `result`
    /// (``PackFunction/spreading(_:count:widening:)``).
    static func callSpread(
        _ function: UnsafeRawPointer, _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ count: Int,
        _ result: UnsafeMutableRawPointer
    ) {
        cffi_call_spread(function, arguments, UInt64(count), result)
    }

    /// Calls `function`, of a register-only signature, with these argument registers: a direct call.
    @usableFromInline @_transparent
    static func call(
        _ function: UnsafeRawPointer, _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double,
        _ d7: Double
    ) -> RegisterResult {
        RegisterResult(cffi_call_registers(function, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7))
    }

    /// ``call(_:_:_:_:_:_:_:_:_:_:_:_:_:_:)`` for a variadic `function`, its arguments past the named
    /// ones already promoted as C promotes them; `vectors` of the doubles are arguments.
    @usableFromInline @_transparent
    static func callVariadic(
        _ function: UnsafeRawPointer, _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64,
        vectors: Int, _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double,
        _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        RegisterResult(cffi_call_registers_variadic(function, i0, i1, i2, i3, i4, UInt32(truncatingIfNeeded: vectors), d0, d1, d2, d3, d4, d5, d6, d7))
    }
}

/// A closure called through `cffi_call_opaque` (see ``OpaqueBody``): the record that assembly reads, and
/// what keeps its function's context alive, for as long as this object lives.
@usableFromInline
final class OpaqueCall: @unchecked Sendable {  // Written once, before any call.
    let record = UnsafeMutablePointer<cffi_opaque_call>.mallocated()
    private let owner: Any

    init(_ owner: Any) { self.owner = owner }

    deinit { record.freeMallocated() }

    /// The closure in pack form this call runs, where it runs one (``PackFunction/thunk(_:swiftType:)``):
    /// what holds its libffi handler. Asked only as a closure or an implementation is made.
    var pack: PackFunction? { owner as? PackFunction }

    /// The call as a register body, for a caller that has the registers in Swift (a slot's stub); it
    /// keeps this object alive.
    @usableFromInline var body: RegisterBody {
        RegisterBody { [self] i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7 in
            RegisterResult(cffi_call_opaque(i0, i1, i2, i3, i4, record, d0, d1, d2, d3, d4, d5, d6, d7))
        }
    }
}

extension RegisterResult {
    /// The registers a C function returned. Transparent, so that a debug build makes no call of it either.
    @usableFromInline @_transparent
    init(_ registers: cffi_registers) { self.init(integer: registers.integer, sse: registers.sse) }
}
