/// The Swift side of a closure's call: reads libffi's argument array, runs the user's closure, writes the
/// result. A ``CClosure`` stores the body and is libffi's user data itself, unretained, so a call costs no
/// retain/release, no lock and no allocation.
@usableFromInline
struct CallThunk: Sendable {
    /// `(result, arguments)` exactly as libffi hands them to a closure handler.
    @usableFromInline
    typealias ArrayBody = @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Void

    /// The signature, already prepared for libffi (shared by every closure of that signature).
    @usableFromInline let prepared: PreparedSignature
    @usableFromInline let body: ArrayBody
    /// The same call in register form, made where the closure's Swift types say which register each
    /// argument arrives in (see ``RegisterPath``); ``RegisterBody/unused`` where they cannot or the
    /// signature does not (``hasRegisters`` false). Not optional: copying and destroying an optional one
    /// goes through `Optional`'s value witnesses for each closure made.
    @usableFromInline let registers: RegisterBody
    /// The Swift function type of the user's closure (`(A0, A1) -> R`), when it has one: what
    /// `functionPointer(as:)` compares a struct or enum parameter with, whose C type its name does not
    /// say. A metatype, so recording it costs no allocation; it is named only when checked.
    let swiftType: Any.Type?
    /// The entry a ``CClosure`` of this thunk enters in registers with a context of its own, if any, or
    /// the closure in pack form, which holds ``handler``.
    let ownEntry: OwnEntry
    /// Whether ``registers`` is the closure's own, and whether the signature takes registers at all (its
    /// ``PreparedSignature/registerLayout`` is not nil). Bytes after the words rather than words of their
    /// own: the thunk is 58 bytes, a ``CClosure`` 88, which malloc serves from a 96-byte chunk.
    ///
    /// Two flags rather than one keep the thunk passed by address: a value Swift splits into at most
    /// eight scalars is passed in registers, and one taken out of ``Implementation/Thunk`` is then copied
    /// through its value witness (a metadata lookup and about a hundred instructions a copy), which made
    /// a delegate's implement dearer by 250 instructions a slot.
    @usableFromInline let hasRegisters: Bool
    let takesRegisters: Bool

    /// libffi's handler for ``body``'s work done in C, where there is one (``PackFunction``): what a
    /// ``CClosure`` or a slot gives libffi instead of a Swift handler that calls ``body``. Found from the
    /// pack form the thunk holds, so that the handler's two words are not stored beside it.
    var handler: Handler? { pack?.handler }

    /// The closure in pack form, where it is: held as the thunk's own entry, or by its opaque call.
    var pack: PackFunction? {
        switch ownEntry {
        case .none, .direct, .shape: return nil
        case .pack(let pack): return pack
        case .opaque(let opaque): return opaque.pack
        }
    }

    /// A handler in C and its user data, which ``body`` keeps valid as long as it lives.
    @usableFromInline
    struct Handler: @unchecked Sendable {  // The user data is only read, by the handler.
        let function: LibffiShim.Handler
        let userData: UnsafeMutableRawPointer
    }

    /// An entry of a ``CClosure``'s own, whose context is an object of its own rather than the closure's
    /// register form, or the pack form whose handler libffi calls: one word, where three optionals took
    /// four.
    enum OwnEntry {
        case none
        /// The closure's own register entry, `#CClosure`'s (see ``_DirectEntry``).
        case direct(_DirectEntry)
        /// The register entry of the common shape the closure's types are, with its captured closure as
        /// context (see ``ShapeEntry``). Unretained: the thunk's ``body`` captures the same object and
        /// keeps it (a reference of its own cost each closure made a retain and a release).
        case shape(Unmanaged<ShapeEntry>)
        /// The register form as a call of `cffi_call_opaque`, entered with its record (see
        /// ``OpaqueBody``); ``registers`` is then its ``OpaqueCall/body``. Of a closure in pack form, the
        /// call holds the ``PackFunction``.
        case opaque(OpaqueCall)
        /// No entry of its own: the closure in pack form, without an opaque call (see ``PackFunction``).
        case pack(PackFunction)
    }

    /// A thunk of `body` (and `registers`, its register form, when the closure has one). A ``CClosure``
    /// enters `shape`'s entry where given (and the register path takes it), else `opaque`; `body` must
    /// capture the object, which the thunk holds unretained (see ``ShapeEntry/unretainedShape``).
    @usableFromInline
    init(
        prepared: PreparedSignature, swiftType: Any.Type? = nil, registers: RegisterBody? = nil, opaque: OpaqueCall? = nil,
        shape: Unmanaged<ShapeEntry>? = nil, body: @escaping ArrayBody
    ) {
        self.prepared = prepared
        self.swiftType = swiftType
        self.registers = registers ?? .unused
        hasRegisters = registers != nil
        takesRegisters = prepared.registerLayout != nil
        // Not `map` and `??`: a debug build runs them generic, for every closure made.
        if let shape {
            ownEntry = .shape(shape)
        } else if let opaque {
            ownEntry = .opaque(opaque)
        } else {
            ownEntry = .none
        }
        self.body = body
    }

    /// A thunk of `body` whose own entry, or pack form, is `ownEntry`. (Not called by the initializer
    /// above: delegating to it cost each `CClosure` made about 175 instructions of copies.)
    init(prepared: PreparedSignature, swiftType: Any.Type?, registers: RegisterBody?, ownEntry: OwnEntry, body: @escaping ArrayBody) {
        self.prepared = prepared
        self.swiftType = swiftType
        self.registers = registers ?? .unused
        hasRegisters = registers != nil
        takesRegisters = prepared.registerLayout != nil
        self.ownEntry = ownEntry
        self.body = body
    }

    private init(_ thunk: CallThunk, registers: RegisterBody?, ownEntry: OwnEntry) {
        prepared = thunk.prepared
        swiftType = thunk.swiftType
        self.registers = registers ?? .unused
        hasRegisters = registers != nil
        takesRegisters = thunk.takesRegisters
        self.ownEntry = ownEntry
        body = thunk.body
    }

    /// The register entry the closure enters with an object of its own as context, and that object: a
    /// shape's or `#CClosure`'s, if it has one.
    var ownRegisterEntry: (entry: RegisterEntry, context: AnyObject)? {
        switch ownEntry {
        case .direct(let direct): return (direct.entry, direct)
        case .shape(let shape): return shape._withUnsafeGuaranteedRef { $0.entry }.map { ($0, shape.takeUnretainedValue()) }
        case .none, .opaque, .pack: return nil
        }
    }

    /// The call in register form, for a signature that takes registers: the closure's own, or ``body``
    /// run on an argument array made from the registers.
    func registerForm() -> RegisterBody {
        guard let layout = prepared.registerLayout else { return .unused }
        if hasRegisters { return registers }
        let body = body
        return RegisterBody { i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7 in
            layout.run(ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7), body)
        }
    }

    /// This thunk with ``registers`` its ``registerForm()``: itself, unless the signature takes registers
    /// and the closure has no register form of its own.
    consuming func withRegisterForm() -> CallThunk {
        guard !hasRegisters, takesRegisters else { return self }
        return CallThunk(self, registers: registerForm(), ownEntry: ownEntry)
    }

    @usableFromInline
    init(signature: CSignature, swiftType: Any.Type? = nil, body: @escaping ArrayBody) throws {
        self.init(prepared: try PreparedSignature.prepared(signature), swiftType: swiftType, body: body)
    }

    @usableFromInline var signature: CSignature { prepared.signature }

    /// This thunk with `direct` as a ``CClosure``'s own register entry.
    @usableFromInline
    func entering(_ direct: _DirectEntry) -> CallThunk {
        CallThunk(self, registers: hasRegisters ? registers : nil, ownEntry: .direct(direct))
    }

    /// The thunk for a closure with typed arguments, of more than the fixed-arity overloads take: it runs
    /// in pack form (``PackFunction``), called with libffi's argument array as it is, or reads each argument
    /// where that form does not suit its types.
    @inlinable
    static func typed<each A: CValue, R: CValue>(
        _ closure: @escaping @Sendable (repeat each A) -> R
    ) throws -> CallThunk {
        try packed(closure, returning: try R.checkedCType()) { result, arguments, widening in
            var cursor = arguments
            storeResult(closure(repeat nextArgument(&cursor) as each A), to: result, widening)
        }
    }

    /// The thunk for a closure that returns nothing.
    @inlinable
    static func typed<each A: CValue>(
        _ closure: @escaping @Sendable (repeat each A) -> Void
    ) throws -> CallThunk {
        try packed(closure, returning: .void) { _, arguments, _ in
            var cursor = arguments
            closure(repeat nextArgument(&cursor) as each A)
        }
    }

    /// `typed` for a closure whose result type is left open (see ``ResultCheck``): a ``CValue`` result is
    /// stored as the closure's own type, which is its C type's layout, and `Void` is nothing to store; any
    /// other is discarded by a wrapping closure (a function type with a pack cannot be cast).
    @inlinable
    static func typed<each A: CValue, R>(anyResult closure: @escaping @Sendable (repeat each A) -> R) throws -> CallThunk {
        let result = ResultCheck.cValue(R.self)
        guard result != nil || R.self == Void.self else {
            return try typed { (argument: repeat each A) -> Void in _ = closure(repeat each argument) }
        }
        return try packed(closure, returning: result?.checkedCType() ?? .void) { result, arguments, widening in
            var cursor = arguments
            withUnsafeBytes(of: closure(repeat nextArgument(&cursor) as each A)) {
                UnsafeMutableRawBufferPointer(start: result, count: $0.count).copyMemory(from: $0)
            }
            widening.apply(to: result)
        }
    }

    /// The thunk of `closure`, returning `returnType`: in pack form (``PackFunction``) where its argument
    /// types allow, else running `byArgument(result, arguments, widening)`, which reads each argument by
    /// its type.
    @inlinable
    static func packed<each A: CValue, R>(
        _ closure: @escaping @Sendable (repeat each A) -> R, returning returnType: @autoclosure () throws -> CType,
        byArgument: @escaping @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>, ReturnWidening) -> Void
    ) throws -> CallThunk {
        let signature = try CSignature.of(returning: returnType(), repeat (each A).self)
        let swiftType = ((repeat each A) -> R).self
        let widening = signature.returnType.widening
        guard let function = PackFunction.make(closure, widening: widening) else {
            return try CallThunk(signature: signature, swiftType: swiftType) { result, arguments in byArgument(result, arguments, widening) }
        }
        return try function.thunk(signature, swiftType: swiftType)
    }

    /// The thunk for a closure that reads its arguments through a ``CInvocation``.
    static func dynamic(_ signature: CSignature, _ closure: @escaping @Sendable (CInvocation) -> Void) throws -> CallThunk {
        let layout = InvocationLayout(signature)
        let prepared = try PreparedSignature.prepared(signature)
        // In register form the closure is handed the argument array made from the registers directly.
        var registers: RegisterBody?
        if let registerLayout = prepared.registerLayout {
            registers = RegisterBody { i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7 in
                registerLayout.run(ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)) { result, arguments in
                    closure(CInvocation(layout: Unmanaged.passUnretained(layout), result: result, arguments: arguments))
                }
            }
        }
        let resultSize = prepared.resultBufferSize
        return CallThunk(prepared: prepared, registers: registers) { result, arguments in
            PreparedSignature.zeroResult(result, byteCount: resultSize)  // for a closure that sets no result
            // The thunk's closure holds the layout for as long as C may call it.
            closure(CInvocation(layout: Unmanaged.passUnretained(layout), result: result, arguments: arguments))
        }
    }

}

/// Stands in for a NULL argument array, which libffi could pass for a signature without arguments:
/// never read, since such a signature has nothing to read.
var noArguments: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
    UnsafeMutablePointer(bitPattern: MemoryLayout<UnsafeMutableRawPointer?>.alignment).unsafelyUnwrapped
}
