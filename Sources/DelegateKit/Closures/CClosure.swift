/// A Swift closure made into a real C function pointer, with any C signature, capturing whatever it
/// likes: no `void *` context argument needed.
///
/// ```swift
/// let descending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
///     let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
///     return x < y ? 1 : x > y ? -1 : 0
/// }
/// qsort(&numbers, numbers.count, 4, descending.functionPointer(as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32).self))
/// ```
///
/// ## Lifetime
/// The closure owns its executable code and frees it when it is deinitialized. C must not call
/// ``address`` after that: keep the `CClosure` alive (a stored property, or `withExtendedLifetime`) for as
/// long as C may call it.
///
/// ## Threads
/// C may call the pointer from any thread, any number of times at once, so the closure is `@Sendable`:
/// the compiler checks what it captures. A call takes no lock and allocates nothing.
public final class CClosure: @unchecked Sendable {  // Immutable; the libffi closure is only freed in deinit.
    /// What a call runs, in both forms, with the signature and the Swift type: the thunk the closure was
    /// made from, moved in whole (its register form made first, where it had none). Copying its parts one
    /// by one counted a reference for each, and another as the thunk went: making and freeing a closure
    /// spent most of its time counting references.
    ///
    /// The first stored property: code entering ``TrampolineShim/bodyEntry`` reads the register form's
    /// words where it lies in this object (see ``registersOffset``).
    let thunk: CallThunk
    let code: ClosureCode
    /// What a call after deinitialization reports in a debug build (see ``Graveyard``); a delegate names
    /// the method here as it is deinitialized. Release builds store nothing: closures are made often.
    #if DEBUG
    var epitaph: String?
    #else
    var epitaph: String? { nil }
    #endif

    /// The C-callable code: pass it wherever C wants a function pointer of ``signature``.
    public var address: UnsafeRawPointer { code.address }

    /// The C signature of ``address``: for a variadic closure, its fixed arguments, marked
    /// ``CSignature/isVariadic``.
    public var signature: CSignature { thunk.prepared.signature }

    /// The prepared signature.
    var prepared: PreparedSignature { thunk.prepared }
    /// What a call runs (libffi's user data is this object itself).
    var body: CallThunk.ArrayBody { thunk.body }
    /// What a call runs when it enters in register form (see ``RegisterPath``).
    var registers: RegisterBody { thunk.registers }
    /// The user's closure's Swift function type, when it has one (see ``CallThunk``).
    var swiftType: Any.Type? { thunk.swiftType }

    /// The register entry the code enters with its own context, when it has one (a common shape's, or
    /// `#CClosure`'s): what the spelling matrix checks each shape reaches.
    var ownEntry: RegisterEntry? {
        guard code.entersInRegisters, let own = thunk.ownRegisterEntry,
              code.userData == Unmanaged.passUnretained(own.context).toOpaque() else { return nil }
        return own.entry
    }

    /// A closure running `thunk`; one made for the user (`joinsScope`) is kept by the current
    /// ``withCallbackScope(_:)`` until it ends.
    @usableFromInline
    convenience init(thunk: consuming CallThunk, joinsScope: Bool = true) throws {
        let handler = thunk.handler
        try self.init(
            consume thunk, handler: handler?.function ?? CClosure.entry, handlerData: handler?.userData,
            registerEntry: TrampolineShim.bodyEntry, ownEntries: true)
        if joinsScope { CallbackScope.adopt(self) }
    }

    /// A closure running `thunk` whose calls go to `handler` with `handlerData`, or this closure, as user
    /// data; or, when the signature takes the register path and `registerEntry` is given, to
    /// `registerEntry` with the same context (or the register form's words, for an entry that takes
    /// them); or, given `ownEntries`, to the thunk's ``CallThunk/ownEntry``: its shape's or direct entry
    /// with its own context, or `cffi_call_opaque` with the opaque call's record. Always inlined into
    /// the two initializers that call it: left out of line (as the compiler chose once, for a change
    /// elsewhere), it made each closure's create and destroy cost 38 instructions more.
    @inline(__always)
    init(
        _ thunk: consuming CallThunk, handler: LibffiShim.Handler, handlerData: UnsafeMutableRawPointer? = nil,
        registerEntry: RegisterEntry?, ownEntries: Bool = false
    ) throws {
        let thunk = (consume thunk).withRegisterForm()
        // The entry the code enters in registers, and the context it enters with where the entry has one
        // of its own (an object, or the opaque call's record): found in one switch, so that the shapes'
        // and `#CClosure`'s entries are one case of the code below.
        let entry: RegisterEntry?
        let ownContext: UnsafeMutableRawPointer?
        switch ownEntries ? thunk.ownEntry : .none {
        case .direct(let direct): (entry, ownContext) = (direct.entry, Unmanaged.passUnretained(direct).toOpaque())
        case .shape(let shape): (entry, ownContext) = (shape._withUnsafeGuaranteedRef { $0.entry }, shape.toOpaque())
        case .opaque(let opaque): (entry, ownContext) = (TrampolineShim.opaqueEntry, UnsafeMutableRawPointer(opaque.record))
        case .none, .pack: (entry, ownContext) = (registerEntry, nil)
        }
        code = try ClosureCode(thunk.prepared, handler: handler, registerEntry: entry, userData: nil)
        if code.entersInRegisters, let ownContext {
            code.setUserData(ownContext)
        } else if code.entersInRegisters && registerEntry?.contextIsBodyWords == true {
            self.thunk = thunk
            code.setUserData(Unmanaged.passUnretained(self).toOpaque() + CClosure.registersOffset)  // `self` exists only now
            return
        } else {
            self.thunk = thunk
            code.setUserData(handlerData ?? Unmanaged.passUnretained(self).toOpaque())  // `self` exists only now
            return
        }
        self.thunk = thunk
    }

    /// Where ``CallThunk/registers`` lies in a closure, in bytes from its address: past the object's
    /// header (its metadata pointer and reference counts, two words in Swift's runtime), in ``thunk``, the
    /// first stored property. Code entering ``TrampolineShim/bodyEntry`` has this address as its context:
    /// the register form's two words, read in place for as long as the closure lives, where a copy of
    /// them took 16 bytes of the trampoline table's own for every closure (the offset is checked against
    /// the words there in `RegisterPathAgreementTests`, on each CPU and in both builds).
    static var registersOffset: Int {
        2 * MemoryLayout<UnsafeRawPointer>.size + MemoryLayout<CallThunk>.offset(of: \CallThunk.registers).unsafelyUnwrapped
    }

    /// The one function libffi calls for every DelegateKit closure but slot dispatchers.
    static let entry: LibffiShim.Handler = { _, result, arguments, userData in
        // libffi passes a valid result buffer always, and an argument array that is only empty when
        // the signature has no arguments; neither is read beyond what the signature says.
        Unmanaged<CClosure>.fromOpaque(userData.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            $0.body(result.unsafelyUnwrapped, arguments ?? noArguments)
        }
    }

    /// A C function pointer whose signature comes from the closure's Swift types.
    ///
    /// A closure that returns a ``CValue`` type makes a C function returning that type's C type; any
    /// other closure, one returning nothing, a C function returning `void` (a one-expression closure's
    /// value C cannot receive is discarded, as Swift discards it where `Void` is expected).
    ///
    /// Throws ``DelegateError/layoutMismatch(type:cType:swiftSize:swiftAlignment:)`` or
    /// ``DelegateError/notTrivial(type:)`` when a ``CValue`` type's stated C layout cannot be right.
    @inlinable
    public convenience init<each A: CValue, R>(_ body: @escaping @Sendable (repeat each A) -> R) throws {
        try self.init(thunk: CallThunk.typed(anyResult: body))
    }

    /// A C function pointer for a signature known only at run time; the closure reads its arguments and
    /// sets its result through the ``CInvocation``.
    public convenience init(signature: CSignature, _ body: @escaping @Sendable (CInvocation) -> Void) throws {
        try self.init(thunk: CallThunk.dynamic(signature, body))
    }

    deinit {
        if let epitaph {
            code.free(epitaph: epitaph)
        } else {
            code.free(lastingEpitaph: thunk.prepared.closureEpitaph)
        }
    }
}

/// A closure's pointer comes out as the function type a C API declares, checked against its signature.
extension CClosure: CFunctionPointerConvertible, ClosureTypeProviding {}

extension CClosure: Hashable {
    /// Whether `a` and `b` are the same closure (one function pointer), as for any reference.
    public static func == (a: CClosure, b: CClosure) -> Bool { a === b }

    /// Hashes the closure's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
