/// A closure of any arity, kept where one piece of assembly can call it with libffi's argument array as
/// it is: what a typed closure of more parameters than the fixed-arity overloads runs on each call.
///
/// A parameter pack cannot be iterated at no cost: Swift 6.3 does not unroll a pack expansion even where
/// it specializes one, so reading each argument with `repeat nextArgument(&cursor)` costs a generic call
/// and a metadata lookup per argument per call (a closure of seven parameters cost ~30× one of six). But
/// a function value of type `(repeat each A) -> R` that a generic type stores is in pack form: its one
/// argument is the pack, an array of the address of each element, which is exactly the array libffi
/// hands a closure; its result goes through the indirect-result register. So `cffi_call_pack`
/// (`TrampolineTable.S`) calls it with libffi's array, whatever its length, and the closure's own
/// reabstraction thunk, made where its types were concrete, reads each argument.
///
/// The value lives in a ``Storage`` of its own (a struct of one stored property, whose address is the
/// value's): a function value of a pack type cannot be handed to a generic parameter to be read, and a
/// struct's layout, unlike a class's, puts its one property at its start.
///
/// A call that enters by libffi's array (libffi's entry, or `cffi_enter_array`) runs no Swift code before
/// the closure's thunk: the closure's handler is `cffi_pack_handler` (`CFFIShim/Libffi/PackFunction.c`),
/// given a record of the function's words and result type, which this object owns.
@usableFromInline
final class PackFunction: @unchecked Sendable {  // Written once, in init.
    /// The stored closure's two words, its code and its context, in pack form.
    private let words: UnsafeMutableRawPointer
    /// Destroys and frees ``words``' storage, which only the generic initializer knows the type of.
    private let destroy: @Sendable (UnsafeMutableRawPointer) -> Void
    /// How a result narrower than a register is widened for libffi.
    private let widening: ReturnWidening
    /// For a closure kept in its most general form (``spreading(_:count:widening:)``), its number of
    /// parameters, each an address of its own; 0 for one in pack form.
    private let spread: Int
    /// The user data of ``LibffiShim/packHandler(spread:)``: ``words`` and ``widening``.
    private let call: UnsafeMutableRawPointer

    /// Where the closure is stored: its one property is at the struct's address.
    @usableFromInline
    struct Storage<each A, R> {
        @usableFromInline let closure: (repeat each A) -> R

        @inlinable
        init(_ closure: @escaping (repeat each A) -> R) { self.closure = closure }
    }

    /// Keeps `closure` in pack form, its result widened as `widening` says, or returns nil where libffi's array may not suit it: an argument
    /// type aligned to more than 8 bytes, whose copy libffi does not promise to align (a struct passed on
    /// the stack, a `long double`), while the closure's thunk may read it with aligned instructions.
    @inlinable
    static func make<each A: CValue, R>(
        _ closure: @escaping @Sendable (repeat each A) -> R, widening: ReturnWidening
    ) -> PackFunction? {
        for type in repeat (each A).self {
            guard alignment(of: type) <= 8 else { return nil }
        }
        let storage = UnsafeMutablePointer<Storage<repeat each A, R>>.mallocated()
        storage.initialize(to: Storage(closure))
        return PackFunction(words: UnsafeMutableRawPointer(storage), widening: widening) {
            let storage = $0.assumingMemoryBound(to: Storage<repeat each A, R>.self)
            storage.deinitialize(count: 1)
            storage.freeMallocated()
        }
    }

    /// Keeps `closure`, a function value of `count` parameters (seven or eight, whose types
    /// ``make(_:widening:)`` would accept), in its most general form: each argument by address, so that
    /// `cffi_call_spread` hands it libffi's array element by element. What a fixed-arity closure of that
    /// many parameters runs where they do not all arrive in registers: a pack made of it would be a
    /// second reabstraction thunk in front of its own. Never specialized, so that `closure` arrives as a
    /// value of an unknown type, which is that form, whatever its type is.
    @usableFromInline @_semantics("optimize.sil.specialize.generic.never")
    static func spreading<Function>(_ closure: Function, count: Int, widening: ReturnWidening) -> PackFunction {
        assert(MemoryLayout<Function>.size == 2 * MemoryLayout<UnsafeRawPointer>.size && (7...8).contains(count))
        let storage = UnsafeMutablePointer<Function>.mallocated()
        storage.initialize(to: closure)
        return PackFunction(words: UnsafeMutableRawPointer(storage), widening: widening, spread: count) {
            let storage = $0.assumingMemoryBound(to: Function.self)
            storage.deinitialize(count: 1)
            storage.freeMallocated()
        }
    }

    @inlinable
    static func alignment<T>(of _: T.Type) -> Int { MemoryLayout<T>.alignment }

    @usableFromInline
    init(
        words: UnsafeMutableRawPointer, widening: ReturnWidening, spread: Int = 0,
        destroy: @escaping @Sendable (UnsafeMutableRawPointer) -> Void
    ) {
        self.words = words
        self.widening = widening
        self.spread = spread
        self.destroy = destroy
        let narrowResult: LibffiShim.Scalar?
        switch widening {
        case .none: narrowResult = nil
        case .signExtend8: narrowResult = .sint8
        case .signExtend16: narrowResult = .sint16
        case .signExtend32: narrowResult = .sint32
        case .zeroExtend8: narrowResult = .uint8
        case .zeroExtend16: narrowResult = .uint16
        case .zeroExtend32: narrowResult = .uint32
        }
        call = LibffiShim.makePackCall(function: words, spread: spread, narrowResult: narrowResult)
    }

    deinit {
        LibffiShim.freePackCall(call)
        destroy(words)
    }

    /// The thunk of this closure, of `signature`: its body, its handler in C and, where the signature
    /// takes registers, its register form.
    @usableFromInline
    func thunk(_ signature: CSignature, swiftType: Any.Type) throws -> CallThunk {
        let prepared = try PreparedSignature.prepared(signature)
        let opaque = opaqueCall(prepared)
        // The opaque call, where there is one, holds this object, and the thunk its handler through it.
        return CallThunk(
            prepared: prepared, swiftType: swiftType, registers: opaque?.body, ownEntry: opaque.map { .opaque($0) } ?? .pack(self),
            body: body)
    }

    /// libffi's handler that does ``body``'s work in C, with its user data: valid as long as this lives.
    var handler: CallThunk.Handler {
        CallThunk.Handler(function: LibffiShim.packHandler(spread: spread != 0), userData: call)
    }

    /// Calls the closure with libffi's array as its pack, then widens a result narrower than a register as
    /// libffi expects: what callers of ``CallThunk/body`` run (``handler`` does the same in C). It holds
    /// this object, and so the closure, as long as it lives.
    private var body: CallThunk.ArrayBody {
        if spread != 0 {
            return { [self] result, arguments in
                TrampolineShim.callSpread(words, arguments, spread, result)
                widening.apply(to: result)
            }
        }
        return { [self] result, arguments in
            TrampolineShim.callPack(words, arguments, result)
            widening.apply(to: result)
        }
    }

    /// The call in register form, for a signature that takes registers: `cffi_call_opaque` stores the
    /// argument registers in a block and calls the closure with the array of their addresses, as libffi's
    /// entry would have made it.
    private func opaqueCall(_ prepared: PreparedSignature) -> OpaqueCall? {
        guard spread == 0, let layout = prepared.registerLayout else { return nil }
        let value = words.load(as: (code: UnsafeRawPointer, context: UnsafeRawPointer?).self)
        return TrampolineShim.opaqueCall(
            function: value.code, context: value.context, layout: layout, pack: true,
            resultShift: OpaqueBody.resultShift(prepared.signature.returnType), owner: self)
    }
}
