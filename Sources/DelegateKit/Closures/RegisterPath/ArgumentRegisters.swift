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

    /// Integer register `index`: a chain of tests that folds to one register where `index` is a constant,
    /// and a setter that rebuilds the tuple, which folds to one store. (An indexed access through
    /// `withUnsafeBytes` would put the tuple in memory and add a stack protector.)
    @inlinable
    subscript(integer index: Int) -> UInt64 {
        @inline(__always) get {
            index == 0 ? integers.0 : index == 1 ? integers.1 : index == 2 ? integers.2 : index == 3 ? integers.3 : integers.4
        }
        @inline(__always) set {
            integers = (
                index == 0 ? newValue : integers.0, index == 1 ? newValue : integers.1, index == 2 ? newValue : integers.2,
                index == 3 ? newValue : integers.3, index >= 4 ? newValue : integers.4)
        }
    }

    /// SSE register `index` (see ``subscript(integer:)``).
    @inlinable
    subscript(sse index: Int) -> Double {
        @inline(__always) get {
            index == 0 ? sse.0 : index == 1 ? sse.1 : index == 2 ? sse.2 : index == 3 ? sse.3
                : index == 4 ? sse.4 : index == 5 ? sse.5 : index == 6 ? sse.6 : sse.7
        }
        @inline(__always) set {
            sse = (
                index == 0 ? newValue : sse.0, index == 1 ? newValue : sse.1, index == 2 ? newValue : sse.2,
                index == 3 ? newValue : sse.3, index == 4 ? newValue : sse.4, index == 5 ? newValue : sse.5,
                index == 6 ? newValue : sse.6, index >= 7 ? newValue : sse.7)
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

    /// Appends `value` as a variadic function receives it past its named arguments: C's default argument
    /// promotions make a `float` a `double`, and a narrower integer an `int`, which ``append(_:)``'s
    /// extension to 32 bits already is.
    @inlinable @inline(__always)
    mutating func appendPromoted<T: CValue>(_ value: T) {
        if T.self == Float.self {
            append(Double(unsafeBitCast(value, to: Float.self)))
        } else {
            append(value)
        }
    }

    /// Calls the variadic C function at `function` with these registers, its arguments past the named ones
    /// appended by ``appendPromoted(_:)``: x86_64 tells the callee how many vector registers hold
    /// arguments, ``sseTaken``.
    @inlinable @inline(__always)
    func callVariadic(_ function: UnsafeRawPointer) -> RegisterResult {
        TrampolineShim.callVariadic(
            function, integers.0, integers.1, integers.2, integers.3, integers.4, vectors: sseTaken,
            sse.0, sse.1, sse.2, sse.3, sse.4, sse.5, sse.6, sse.7)
    }
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
