/// The register path: how C enters a closure of a *register-only* signature without libffi.
///
/// On x86_64 System V, a signature whose arguments are at most 5 of integer class (integers up to 64
/// bits, `bool`, pointers) and at most 8 of SSE class (`float`, `double`), returning `void`, one of
/// those or a pointer, travels entirely in registers. Its C address is then a trampoline that loads a
/// context pointer into `r9`, the integer argument register such a signature leaves free, and jumps to one
/// of DelegateKit's entries (in a page of DelegateKit's own, see `cffi_trampoline_create`, or in libffi's
/// closure memory, see `cffi_register_closure_create`). The entry hands the registers to a
/// ``RegisterBody``, the user's closure behind a conversion specialized for its Swift types when it was
/// made, or is the closure's own (see ``_DirectEntry``). libffi's generic entry, which classifies and
/// copies every argument of every call, is not involved.
///
/// Everything else (and every closure when the path is off, see ``isAvailable``) enters through libffi.
@usableFromInline
enum RegisterPath {
    /// Whether closures of register-only signatures take this path: on x86_64 System V, unless the
    /// environment sets `DELEGATEKIT_FAST_PATH=0`, and only when a trampoline written into libffi's
    /// closure memory was proven to run (a libffi built with static trampolines runs its own code there).
    @usableFromInline static let isAvailable: Bool = TrampolineShim.isAvailable

    /// Whether register trampolines go into DelegateKit's own pages (see `cffi_trampoline_create`), where
    /// they reach the entry with a near jump, rather than into libffi's closure memory: in release builds.
    /// A debug build keeps a dead closure's code callable to stop with a message (see ``Graveyard``),
    /// which means rewriting it, and a page is never writable once it is executable.
    static let usesOwnPages: Bool = {
        #if DEBUG
        return false
        #else
        return true
        #endif
    }()

    /// Whether a closure made now on this thread gets a register trampoline for `prepared`.
    static func entersInRegisters(_ prepared: PreparedSignature) -> Bool {
        prepared.takesRegisters && !TrampolineShim.isSuppressedHere
    }

    /// Runs `body` with closures, stubs and dispatchers made on this thread entering through libffi, as
    /// with `DELEGATEKIT_FAST_PATH=0`: for tests that compare both paths in one process. (Register
    /// forms are still made, and a `Next` still calls an original function directly.)
    static func withLibffiEntry<T>(_ body: () throws -> T) rethrows -> T {
        TrampolineShim.isSuppressedHere = true
        defer { TrampolineShim.isSuppressedHere = false }
        return try body()
    }
}

/// A call in register form: the 5 integer and 8 SSE argument registers a register-only signature's
/// arguments arrive in (in order of their class: the first integer-class argument in `i0`, the first
/// floating-point one in `d0`), and the two result registers. Registers a signature does not use hold
/// whatever the caller left there.
///
/// The function is wrapped in a struct so that an optional one is stored as it is: a function value in a
/// generic payload (as in `Optional<Function>`) is stored in its most general form, and each call then
/// goes through a conversion thunk.
@frozen @usableFromInline
struct RegisterBody: Sendable {
    @usableFromInline let call: @Sendable (
        UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double, Double, Double
    ) -> RegisterResult

    @inlinable
    init(
        _ call: @escaping @Sendable (
            UInt64, UInt64, UInt64, UInt64, UInt64, Double, Double, Double, Double, Double, Double, Double, Double
        ) -> RegisterResult
    ) {
        self.call = call
    }

    /// Stands in where a closure has no register form, so that the form is stored without an optional
    /// (loading an optional function copies it, a retain and a release on every call); never called.
    static let unused = RegisterBody { _, _, _, _, _, _, _, _, _, _, _, _, _ in .zero }
}

/// The result registers of a call in register form: `rax` and `xmm0`.
@frozen @usableFromInline
struct RegisterResult {
    @usableFromInline var integer: UInt64
    @usableFromInline var sse: Double

    @inlinable @inline(__always)
    init(integer: UInt64, sse: Double) {
        self.integer = integer
        self.sse = sse
    }

    @inlinable static var zero: RegisterResult { RegisterResult(integer: 0, sse: 0) }
}

/// The argument registers of a call, read in argument order by the specialized conversions.
@frozen @usableFromInline
struct ArgumentRegisters {
    /// The integer argument registers, and the SSE ones: the form in which the registers are passed by
    /// value to a function out of line (an ``ArgumentRegisters`` would be passed by address, and so
    /// stored by the caller on every call).
    @usableFromInline typealias Integers = (UInt64, UInt64, UInt64, UInt64, UInt64)
    @usableFromInline typealias SSE = (Double, Double, Double, Double, Double, Double, Double, Double)

    @usableFromInline var integers: Integers
    @usableFromInline var sse: SSE
    /// How many of each class the arguments read so far took.
    @usableFromInline var integersTaken = 0
    @usableFromInline var sseTaken = 0
    /// False once ``append(_:)`` was given a value wider than a register or more values of a class than
    /// it has registers: these registers cannot carry the call (a constant where the types are known).
    @usableFromInline var fits = true

    @inlinable @inline(__always)
    init(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ d0: Double, _ d1: Double,
        _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) {
        integers = (i0, i1, i2, i3, i4)
        sse = (d0, d1, d2, d3, d4, d5, d6, d7)
    }

    /// The registers passed by value as ``Integers`` and ``SSE``, to read from the first argument on.
    @inlinable @inline(__always)
    init(_ integers: Integers, _ sse: SSE) {
        self.integers = integers
        self.sse = sse
    }

    /// The registers stored at `registers`, to read from the first argument on: only the registers the
    /// arguments take are loaded once the reader is specialized.
    @inlinable @inline(__always)
    init(reading registers: UnsafePointer<ArgumentRegisters>) {
        integers = registers.pointee.integers
        sse = registers.pointee.sse
    }

    /// Empty registers, for ``append(_:)`` to fill.
    @inlinable @inline(__always)
    init() {
        self.init(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// The next argument, of Swift type `T`. The counters and the class test are constants once the
    /// caller is specialized and inlined, so this is one register move (and a truncation): a float is the
    /// low half of its register, a narrow integer the low bits of its (C leaves the rest undefined, and
    /// they are not read).
    @inlinable @inline(__always)
    mutating func next<T: CValue>(_ type: T.Type = T.self) -> T {
        if travelsInSSE(T.self) {
            defer { sseTaken += 1 }
            return sseValue(of: self[sse: sseTaken])
        }
        defer { integersTaken += 1 }
        return integerValue(of: self[integer: integersTaken])
    }

    /// Integer register `index`: a switch that folds to one register where `index` is a constant. (An
    /// indexed access through `withUnsafeBytes` would put the tuple in memory and add a stack protector.)
    @inlinable
    subscript(integer index: Int) -> UInt64 {
        @inline(__always) get {
            switch index {
            case 0: return integers.0
            case 1: return integers.1
            case 2: return integers.2
            case 3: return integers.3
            default: return integers.4
            }
        }
        @inline(__always) set {
            switch index {
            case 0: integers.0 = newValue
            case 1: integers.1 = newValue
            case 2: integers.2 = newValue
            case 3: integers.3 = newValue
            default: integers.4 = newValue
            }
        }
    }

    /// SSE register `index` (see ``subscript(integer:)``).
    @inlinable
    subscript(sse index: Int) -> Double {
        @inline(__always) get {
            switch index {
            case 0: return sse.0
            case 1: return sse.1
            case 2: return sse.2
            case 3: return sse.3
            case 4: return sse.4
            case 5: return sse.5
            case 6: return sse.6
            default: return sse.7
            }
        }
        @inline(__always) set {
            switch index {
            case 0: sse.0 = newValue
            case 1: sse.1 = newValue
            case 2: sse.2 = newValue
            case 3: sse.3 = newValue
            case 4: sse.4 = newValue
            case 5: sse.5 = newValue
            case 6: sse.6 = newValue
            default: sse.7 = newValue
            }
        }
    }

    /// Puts `value` in the next register of its class, for calling C in register form.
    @inlinable @inline(__always)
    mutating func append<T: CValue>(_ value: T) {
        // Past the last register of its class the value has nowhere to go; the counts are constants
        // where the types are known, so this folds away.
        guard MemoryLayout<T>.size <= 8, travelsInSSE(T.self) ? sseTaken < 8 : integersTaken < 5 else {
            fits = false
            return
        }
        if travelsInSSE(T.self) {
            self[sse: sseTaken] = sseBits(of: value)
            sseTaken += 1
        } else {
            // The ABI leaves the bits above a narrow integer undefined, but clang's callees take them as
            // extended to 32 bits (sign or zero, by the type), as clang's callers leave them: do the same.
            var bits = integerBits(of: value)
            if MemoryLayout<T>.size == 1, T.cType == .int8 { bits = UInt64(bitPattern: Int64(Int8(truncatingIfNeeded: bits))) }
            if MemoryLayout<T>.size == 2, T.cType == .int16 { bits = UInt64(bitPattern: Int64(Int16(truncatingIfNeeded: bits))) }
            self[integer: integersTaken] = bits
            integersTaken += 1
        }
    }

    /// Calls the C function at `function`, of a register-only signature, with these registers.
    @inlinable @inline(__always)
    func call(_ function: UnsafeRawPointer) -> RegisterResult {
        callInRegisters(
            function, integers.0, integers.1, integers.2, integers.3, integers.4,
            sse.0, sse.1, sse.2, sse.3, sse.4, sse.5, sse.6, sse.7)
    }
}

/// Whether a Swift type's values travel in SSE registers: decided by the type itself, so that it folds
/// to a constant in specialized code. Register bodies are only made when this agrees with the C type
/// each argument states (see ``registerClassesAgree(_:_:)``).
@inlinable @inline(__always)
func travelsInSSE<T>(_ type: T.Type) -> Bool {
    T.self == Double.self || T.self == Float.self
}

/// Whether `T`'s stated C type is a scalar of the register class ``travelsInSSE(_:)`` gives `T`: the
/// condition for converting `T` from and to registers by type alone.
@inlinable
func registerClassAgrees<T: CValue>(_ type: T.Type, _ cType: CType) -> Bool {
    switch cType {
    case .float, .double: return travelsInSSE(T.self)
    case .bool, .int8, .uint8, .int16, .uint16, .int32, .uint32, .int64, .uint64, .size, .pointer:
        return !travelsInSSE(T.self) && MemoryLayout<T>.size <= 8
    case .void: return true
    case .longDouble, .structure: return false
    }
}

/// `value` as the result registers of a call, a narrow integer widened as libffi widens it. The widening
/// comes from `T`'s C type, a constant once specialized where `T`'s conformance is visible (a closure's
/// register form is specialized in the module that makes it): a widening read at run time was a load and
/// a jump through a table on every call.
@inlinable @inline(__always)
func registerResult<T: CValue>(_ value: T) -> RegisterResult {
    if T.self == CVoid.self { return .zero }
    if travelsInSSE(T.self) { return RegisterResult(integer: 0, sse: sseBits(of: value)) }
    var bits = integerBits(of: value)
    if MemoryLayout<T>.size < 8 { bits = T.cType.widening.widen(bits) }
    return RegisterResult(integer: bits, sse: 0)
}

/// The value of type `T` a C function returned in `result`.
@inlinable @inline(__always)
func resultValue<T>(_ result: RegisterResult, as type: T.Type = T.self) -> T {
    if travelsInSSE(T.self) { return sseValue(of: result.sse) }
    return integerValue(of: result.integer)
}

// Conversions between a register and a value of a type that travels in it, by bit casts of the value's
// own width: they never take an address, so the specialized code keeps everything in registers and
// carries no stack protector. Each switch folds to one case where `T` is known. A narrow value is the
// register's low bits (little-endian), as C puts it there; what lies above is not read.

/// The value of type `T` (at most 8 bytes, of the integer class, or empty) in the low bits of `register`.
@inlinable @inline(__always)
func integerValue<T>(of register: UInt64) -> T {
    switch MemoryLayout<T>.size {
    case 0: return unsafeBitCast((), to: T.self)  // a result that is discarded or `void`
    case 1: return unsafeBitCast(UInt8(truncatingIfNeeded: register), to: T.self)
    case 2: return unsafeBitCast(UInt16(truncatingIfNeeded: register), to: T.self)
    case 4: return unsafeBitCast(UInt32(truncatingIfNeeded: register), to: T.self)
    default: return unsafeBitCast(register, to: T.self)
    }
}

/// `value` (at most 8 bytes, of the integer class) in the low bits of a register, the rest zero.
@inlinable @inline(__always)
func integerBits<T>(of value: T) -> UInt64 {
    switch MemoryLayout<T>.size {
    case 0: return 0
    case 1: return UInt64(unsafeBitCast(value, to: UInt8.self))
    case 2: return UInt64(unsafeBitCast(value, to: UInt16.self))
    case 4: return UInt64(unsafeBitCast(value, to: UInt32.self))
    default: return unsafeBitCast(value, to: UInt64.self)
    }
}

/// The `Double` or `Float` in `register` (a `Float` is its low 32 bits).
@inlinable @inline(__always)
func sseValue<T>(of register: Double) -> T {
    if MemoryLayout<T>.size == 4 { return unsafeBitCast(UInt32(truncatingIfNeeded: register.bitPattern), to: T.self) }
    return unsafeBitCast(register, to: T.self)
}

/// `value`, a `Double` or a `Float`, as an SSE register (a `Float` in its low 32 bits, the rest zero).
@inlinable @inline(__always)
func sseBits<T>(of value: T) -> Double {
    if MemoryLayout<T>.size == 4 { return Double(bitPattern: UInt64(unsafeBitCast(value, to: UInt32.self))) }
    return unsafeBitCast(value, to: Double.self)
}

/// A direct call of `function` with the given registers: inlined, so that a `next` reaching the original
/// from a user's module calls it with no frame between.
@inlinable @inline(__always)
func callInRegisters(
    _ function: UnsafeRawPointer, _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64,
    _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
) -> RegisterResult {
    TrampolineShim.call(function, i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
}

/// Where each argument of a register-only signature arrives, for bodies that read libffi's argument
/// array (a ``CInvocation`` closure, a pack-based closure, observers): the registers are stored to the
/// stack and an array of pointers to them is made, which is all libffi's entry would have made, minus
/// the classification.
@usableFromInline
final class RegisterLayout: @unchecked Sendable {  // Immutable; the buffer is freed in deinit.
    /// Per argument: the register's byte offset in a block of 5 integer registers then 8 SSE registers.
    private let offsets: UnsafeMutableBufferPointer<Int>
    /// Bit `i` set when argument `i` travels in an SSE register; ``sseResult`` when the result does.
    @usableFromInline let classes: Int

    /// The bit of ``classes`` for a floating-point result.
    @inlinable static var sseResult: Int { 1 << 15 }

    /// The layout of `signature` when it is register-only on this platform, else nil.
    init?(_ signature: CSignature) {
        #if arch(x86_64) && !os(Windows)
        var classes = 0
        switch signature.returnType {
        case .longDouble, .structure: return nil
        case .float, .double: classes = RegisterLayout.sseResult
        default: break
        }
        var integers = 0
        var sse = 0
        var offsets: [Int] = []
        for (index, type) in signature.argumentTypes.enumerated() {
            switch type {
            case .float, .double:
                offsets.append(40 + 8 * sse)
                sse += 1
                classes |= 1 << index
            case .bool, .int8, .uint8, .int16, .uint16, .int32, .uint32, .int64, .uint64, .size, .pointer:
                offsets.append(8 * integers)
                integers += 1
            case .void, .longDouble, .structure:
                return nil
            }
        }
        guard integers <= 5, sse <= 8 else { return nil }
        self.offsets = .allocate(capacity: offsets.count)
        _ = self.offsets.initialize(from: offsets)
        self.classes = classes
        #else
        return nil
        #endif
    }

    deinit { offsets.deallocate() }

    /// Runs `body` (libffi's form) on the arguments in `registers` and returns its result as registers.
    @inline(__always)
    func run(
        _ registers: ArgumentRegisters,
        _ body: (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void
    ) -> RegisterResult {
        var block = (registers.integers, registers.sse)
        // libffi's result buffer: 8 bytes hold every result here (a narrow integer as a whole register).
        var result = UInt64(0)
        // One pointer per argument (a register-only signature has at most 13), each set before it is read.
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 13) { list in
            withUnsafeMutableBytes(of: &block) { block in
                let base = block.baseAddress.unsafelyUnwrapped
                let arguments = list.baseAddress.unsafelyUnwrapped
                for index in 0..<offsets.count {
                    (arguments + index).initialize(to: base + offsets[index])
                }
                withUnsafeMutableBytes(of: &result) { body($0.baseAddress.unsafelyUnwrapped, arguments) }
            }
        }
        // The same 8 bytes whichever register C reads the result from.
        return RegisterResult(integer: result, sse: Double(bitPattern: result))
    }
}

extension ReturnWidening {
    /// The register value libffi would make of a narrow integer result held in the low bits of `bits`.
    @inlinable @inline(__always)
    func widen(_ bits: UInt64) -> UInt64 {
        switch self {
        case .none: return bits
        case .signExtend8: return UInt64(bitPattern: Int64(Int8(truncatingIfNeeded: bits)))
        case .signExtend16: return UInt64(bitPattern: Int64(Int16(truncatingIfNeeded: bits)))
        case .signExtend32: return UInt64(bitPattern: Int64(Int32(truncatingIfNeeded: bits)))
        case .zeroExtend8: return UInt64(UInt8(truncatingIfNeeded: bits))
        case .zeroExtend16: return UInt64(UInt16(truncatingIfNeeded: bits))
        case .zeroExtend32: return UInt64(UInt32(truncatingIfNeeded: bits))
        }
    }
}
