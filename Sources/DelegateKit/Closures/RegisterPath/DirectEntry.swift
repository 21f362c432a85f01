#if Macros
/// A closure with its own register entry: code formed where the closure's Swift types are concrete, which
/// C's trampoline enters with this object as its context and which calls the closure itself, so that a
/// call crosses two frames (the entry and the user's closure) where the shared entry, a specialized
/// conversion and the closure make three (see ``RegisterPath``).
///
/// Only a non-generic function can be a `@convention(c)` entry that calls a closure of known types, and
/// only where the closure's types are written can such a function be formed. Two places do: the common
/// callback shapes (`CallbackShapes`, generated: an entry per shape, whose context is the typed thunk's
/// captured closure, a ``ShapeEntry`` whose class gives the entry), and the `#CClosure` macro of the
/// DelegateKitMacros package, whose expansion declares a subclass of this class in the user's module for
/// the literal's signature, and hands it the entry. A ``CClosure`` whose code enters in registers uses
/// it; every other user of a thunk (slot stubs, plans, one-shots, libffi's path) ignores it.
///
/// - Important: Unstable. Public only for `#CClosure`'s expansion, and only with the package trait
///   `Macros`, as ``_DirectRegisters`` and ``CClosure/init(_:_direct:)`` are (without the trait this class
///   is internal and the other two do not exist): not API to use by hand, and free to change in any
///   release, with the macro that writes the calls. Their signatures name only Swift types (the entry's
///   two forms are ``IntegerForm`` and ``FloatingForm``), so no C module of the package reaches a user's
///   code.
open class _DirectEntry: @unchecked Sendable {  // Immutable; subclasses add only `let`s: a @Sendable closure.
    /// Entered by the trampoline with this object as its context pointer.
    @usableFromInline let entry: RegisterEntry

    /// An entry in both forms, as ``RegisterEntry`` holds them.
    @usableFromInline
    init(entry: RegisterEntry) {
        self.entry = entry
    }

    /// An entry in its two forms (see `RegisterEntry`), which C's trampoline calls with the argument
    /// registers and this object as `context` (between the fifth integer register and the first SSE
    /// one): each reads its arguments with a ``_DirectRegisters`` and returns its result through
    /// `_DirectRegisters.integerResult(_:)` or `_DirectRegisters.floatingResult(_:)`: the form for a
    /// result in the integer register, and the one for a result in the floating register.
    public init(integer: IntegerForm, floating: FloatingForm) {
        entry = RegisterEntry(integer: integer, floating: floating)
    }

    /// The form of an entry that returns its result in the integer register: the five integer argument
    /// registers, the context (this object), the eight floating ones. The trampoline's C type
    /// `cffi_integer_entry`, spelled in Swift.
    public typealias IntegerForm = @convention(c) (
        UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeMutableRawPointer?,
        Double, Double, Double, Double, Double, Double, Double, Double
    ) -> UInt64

    /// The form of an entry that returns its result in the floating register (`cffi_floating_entry`).
    public typealias FloatingForm = @convention(c) (
        UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeMutableRawPointer?,
        Double, Double, Double, Double, Double, Double, Double, Double
    ) -> Double
}
#else
// The same class without the trait, internal: entries written by hand (the tests') are its only subclasses.
@usableFromInline
class _DirectEntry: @unchecked Sendable {  // Immutable, as above.
    @usableFromInline let entry: RegisterEntry

    @usableFromInline
    init(entry: RegisterEntry) {
        self.entry = entry
    }
}
#endif

extension CallThunk {
    /// The thunk of `body` entering `entry` when it takes the register path, and otherwise running `body`
    /// as ``typed(_:)`` does: where the closure's Swift types say which register each value travels in.
    @inlinable
    static func typed<each A: CValue, R: CValue>(
        _ body: @escaping @Sendable (repeat each A) -> R, entering entry: _DirectEntry
    ) throws -> CallThunk {
        let thunk = try typed(body)
        return registerClassesAgree(thunk.signature, R.self, repeat (each A).self) ? thunk.entering(entry) : thunk
    }

    /// ``typed(_:entering:)`` for a closure that returns nothing.
    @inlinable
    static func typed<each A: CValue>(
        _ body: @escaping @Sendable (repeat each A) -> Void, entering entry: _DirectEntry
    ) throws -> CallThunk {
        let thunk = try typed(body)
        return registerClassesAgree(thunk.signature, CVoid.self, repeat (each A).self) ? thunk.entering(entry) : thunk
    }
}

#if Macros
/// The argument registers as a direct entry receives them, read in argument order by type: what
/// `#CClosure`'s expansion converts C's arguments and result with. Every method folds to a register move
/// where the types are concrete.
@frozen
public struct _DirectRegisters {
    @usableFromInline var registers: ArgumentRegisters

    /// The registers of one call, as the entry's parameters hold them.
    @inlinable @inline(__always)
    public init(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ d0: Double, _ d1: Double,
        _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) {
        registers = ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
    }

    /// The next argument, of Swift type `T`.
    @inlinable @inline(__always)
    public mutating func next<T: CValue>(_ type: T.Type = T.self) -> T {
        registers.next()
    }

    /// `value` as the integer form's result register, a narrow integer widened as libffi widens it (a
    /// constant where `T`'s C type is visible).
    @inlinable @inline(__always)
    public static func integerResult<T: CValue>(_ value: T) -> UInt64 {
        registerResult(value).integer
    }

    /// The integer form's result register, for a closure that returns nothing.
    @inlinable @inline(__always)
    public static func integerResult(_ value: Void) -> UInt64 { 0 }

    /// `value` as the floating form's result register (a `float` in the low half).
    @inlinable @inline(__always)
    public static func floatingResult<T: CValue>(_ value: T) -> Double {
        registerResult(value).sse
    }

    /// The floating form's result register, for a closure that returns nothing (never entered).
    @inlinable @inline(__always)
    public static func floatingResult(_ value: Void) -> Double { 0 }
}

extension CClosure {
    /// A closure whose code enters `entry` when it takes the register path, and otherwise runs `body` as
    /// ``init(_:)`` does: `#CClosure`'s expansion, whose `entry` holds `body` itself.
    @inlinable
    public convenience init<each A: CValue, R: CValue>(
        _ body: @escaping @Sendable (repeat each A) -> R, _direct entry: _DirectEntry
    ) throws {
        try self.init(thunk: CallThunk.typed(body, entering: entry))
    }

    /// ``init(_:_direct:)`` for a closure that returns nothing.
    @inlinable
    public convenience init<each A: CValue>(_ body: @escaping @Sendable (repeat each A) -> Void, _direct entry: _DirectEntry) throws {
        try self.init(thunk: CallThunk.typed(body, entering: entry))
    }
}
#endif
