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
    /// The C-callable code: pass it wherever C wants a function pointer of ``signature``.
    public let address: UnsafeRawPointer
    /// What a call runs; libffi's user data is this object itself.
    let body: CallThunk.ArrayBody
    /// What a call runs when it enters in register form (see ``RegisterPath``).
    let registers: RegisterBody
    private let code: ClosureCode
    /// The prepared signature (kept alive by the cache too, but the closure should not depend on that).
    let prepared: PreparedSignature
    /// For a slot dispatcher: the plan cell its handler reads, kept alive here.
    private let target: AnyObject?
    /// The closure's own register entry, its context, when its code enters there (see ``_DirectEntry``).
    private let directContext: _DirectEntry?
    /// The user's closure's Swift function type, when it has one (see ``CallThunk``).
    let swiftType: Any.Type?
    /// What a call after deinitialization reports in a debug build (see ``Graveyard``); a delegate names
    /// the method here as it is deinitialized. Release builds store nothing: closures are made often.
    #if DEBUG
    var epitaph: String?
    #else
    var epitaph: String? { nil }
    #endif

    /// The C signature of ``address``: for a variadic closure, its fixed arguments, marked
    /// ``CSignature/isVariadic``.
    public var signature: CSignature { prepared.signature }

    /// The register entry the code enters with its own context, when it has one (a common shape's, or
    /// `#CClosure`'s): what the spelling matrix checks each shape reaches.
    var ownEntry: RegisterEntry? { directContext?.entry }

    /// A closure running `thunk`; one made for the user (`joinsScope`) is kept by the current
    /// ``withCallbackScope(_:)`` until it ends.
    @usableFromInline
    convenience init(thunk: CallThunk, joinsScope: Bool = true) throws {
        try self.init(
            prepared: thunk.prepared, body: thunk.body, handler: thunk.handler?.function ?? CClosure.entry,
            target: nil, handlerData: thunk.handler?.userData,
            swiftType: thunk.swiftType, registers: thunk.registerForm(), registerEntry: TrampolineShim.bodyEntry, opaque: thunk.opaque,
            direct: thunk.direct)
        if joinsScope { CallbackScope.adopt(self) }
    }

    /// A closure whose calls go to `handler` with `handlerData`, or `target`, or this closure as user data;
    /// or, when the signature takes the register path and `registerEntry` is given, to `registerEntry`
    /// with the same context (or ``registers``' words, for an entry that takes them); or, given `direct`,
    /// to its own entry with its own context; or, given `opaque` (whose body ``registers`` is, and keeps
    /// it alive), to `cffi_call_opaque` with its record.
    init(
        prepared: PreparedSignature, body: @escaping CallThunk.ArrayBody, handler: LibffiShim.Handler, target: AnyObject?,
        handlerData: UnsafeMutableRawPointer? = nil, swiftType: Any.Type? = nil, registers: RegisterBody = .unused, registerEntry: RegisterEntry? = nil,
        opaque: OpaqueCall? = nil, direct: _DirectEntry? = nil
    ) throws {
        self.prepared = prepared
        self.body = body
        self.target = target
        self.swiftType = swiftType
        self.registers = registers
        let opaque = direct == nil ? opaque : nil
        code = try ClosureCode(
            prepared, handler: handler,
            registerEntry: direct?.entry ?? (opaque != nil ? TrampolineShim.opaqueEntry : registerEntry), userData: nil)
        address = code.address
        if code.entersInRegisters, let direct {
            directContext = direct
            code.setUserData(Unmanaged.passUnretained(direct).toOpaque())
        } else if code.entersInRegisters, let opaque {
            directContext = nil
            code.setUserData(UnsafeMutableRawPointer(opaque.record))
        } else if code.entersInRegisters, registerEntry?.contextIsBodyWords == true {
            directContext = nil
            code.setUserData(toWordsOf: registers)
        } else {
            directContext = nil
            code.setUserData(handlerData ?? Unmanaged.passUnretained(target ?? self).toOpaque())  // `self` exists only now
        }
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
        code.free(epitaph: epitaph
            ?? "DelegateKit: a CClosure `\(signature)` was called after it was deinitialized; keep it alive "
                + "for as long as C may call it")
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
