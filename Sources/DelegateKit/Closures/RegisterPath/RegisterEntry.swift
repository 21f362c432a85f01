/// The C function a register slot jumps to, in the forms it is made in: one returning its result in the
/// integer result register (`rax`; `x0`), for a signature whose result is void or of integer class, and
/// one returning it in the floating one (`xmm0`; `d0`), for `float` or `double` (a `float` in the low
/// half). The slot enters the form its signature's result needs, so the result is where C reads it with
/// no instruction between: on AAPCS64 no C function returns an integer and a double register at once.
///
/// Most entries' forms are closures that differ only in the field of a ``RegisterResult`` they return:
/// each maker writes the call once, in an `@inline(__always)` function, and the two literals around it.
/// A C-callable literal whose body Swift does not fold into it is a frame of its own that jumps to the
/// body; the entries whose bodies are big (a slot's stub and its dispatcher, which record the call in
/// their own frame) are instead Swift functions with C names that the slot enters directly (`SlotStub.h`):
/// Swift calls a function of integer, pointer and `Double` arguments returning one of them as C does.
/// A `CClosure`'s entry is one piece of assembly serving both forms (``TrampolineShim/bodyEntry``).
@usableFromInline
struct RegisterEntry: Sendable {
    @usableFromInline let integer: TrampolineShim.IntegerEntry
    /// None for an entry that only signatures of non-floating results use (a callback shape's).
    @usableFromInline let floating: TrampolineShim.FloatingEntry?
    /// Whether the context the entry takes is the two words of its owner's ``RegisterBody`` (the shared
    /// ``TrampolineShim/bodyEntry``), rather than its owner itself.
    let contextIsBodyWords: Bool

    @inlinable
    init(integer: TrampolineShim.IntegerEntry, floating: TrampolineShim.FloatingEntry?) {
        self.init(integer: integer, floating: floating, contextIsBodyWords: false)
    }

    @usableFromInline
    init(integer: TrampolineShim.IntegerEntry, floating: TrampolineShim.FloatingEntry?, contextIsBodyWords: Bool) {
        self.integer = integer
        self.floating = floating
        self.contextIsBodyWords = contextIsBodyWords
    }

    /// The form a signature returning `floatingResult` enters, as the address a slot holds; nil when this
    /// entry has no such form.
    func address(floatingResult: Bool) -> UnsafeRawPointer? {
        floatingResult
            ? floating.map { unsafeBitCast($0, to: UnsafeRawPointer.self) }
            : unsafeBitCast(integer, to: UnsafeRawPointer.self)
    }
}
