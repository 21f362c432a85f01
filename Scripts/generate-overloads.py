#!/usr/bin/env python3
"""Writes the fixed-arity overloads of the hot-path entry points into the library, one file per concern,
each in the folder of the layer it belongs to (see DESCRIPTIONS, FOLDERS and main):

- TypedThunks.generated.swift: CallThunk.typed and the Captured objects its two forms share, and the
  CClosure.init, CCallback.oneShot and NotifiedCallback.init that make a C function pointer of a closure;
- DelegateEntryPoints.generated.swift: DynamicDelegate's implement, override, observe and observeResult,
  BlockDelegateProtocol's implement, TypedDelegate's key-path implement and override, the
  OverrideThunk.typed an override is made of, and the typed override layers (Override) and forward
  functions a Next calls the layer below with (a plain layer's is its thunk's Captured object);
- SlotInitializers.generated.swift: @Slot's initializers, one per arity;
- CFunctionCalls.generated.swift: CFunction.call (and a variadic function's variadicCall);
- CallbackShapes.generated.swift: the common callback shapes' own register entries (CallbackShapes),
  which the Captured objects find by their types.

The overloads are for 0 to MAX arguments (SLOT_MAX for slots, CALL_MAX for CFunction.call), each arity
under a MARK of its own. A file is rewritten only when its text changes, and a *.generated.swift file of
the library that the script no longer writes is removed.

Why: Swift 6.3 does not unroll a parameter-pack expansion even when it specializes it, so a pack-based
thunk calls a generic loader and looks up metadata for every argument of every call (about 1,600
instructions for int64(int64,int64), against libffi's ~340). An ordinary generic overload of the same
arity is preferred by overload resolution and specializes to straight-line code. The pack versions stay
for longer signatures.

An overload added or changed here goes through the closure-spelling matrix first
(python3 Scripts/spelling-matrix.py --typecheck): speed never changes what compiles.

Run: python3 Scripts/generate-overloads.py   (then commit the output)
"""
import pathlib

# Eight: a callback of up to eight floating-point arguments (and five integers beside them on x86_64, eight
# on aarch64) takes registers only, where a closure in pack form pays for an array of addresses a call.
MAX = 8
# A debug build calls a closure of at most this many arguments through `cffi_call_opaque`, each address in a
# register (OpaqueBody); past it, in pack form (PackFunction), which runs no generic code per call either.
OPAQUE_MAX = 6
ROOT = pathlib.Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "Sources" / "DelegateKit"
# The script as the headers name it: its path in the repository.
SCRIPT = pathlib.Path(__file__).resolve().relative_to(ROOT).as_posix()
# Where each file goes: the folder of the layer that holds what it declares (ARCHITECTURE.md, "The layers").
FOLDERS = {
    "TypedThunks": "Closures", "CallbackShapes": "Closures/RegisterPath", "CFunctionCalls": "CallingC",
    "DelegateEntryPoints": "Delegates", "SlotInitializers": "Delegates", "VariadicThunks": "Closures",
    "VariadicEntryPoints": "Delegates",
}


def counted(n):
    return f"{n} argument{'' if n == 1 else 's'}"


def mark(n):
    """The MARK that heads the declarations for n arguments."""
    return f"\n// MARK: {counted(n)}\n"


def arity(n):
    generics = [f"A{i}: CValue" for i in range(n)]
    types = [f"A{i}" for i in range(n)]
    args = ", ".join(f"argument(arguments, {i})" for i in range(n))
    checked = ", ".join(f"try A{i}.checkedCType()" for i in range(n))
    params = ", ".join(f"a{i}: A{i}" for i in range(n))
    names = ", ".join(f"a{i}" for i in range(n))
    return generics, types, args, checked, params, names


def typed_thunk_body(n, void, layer=False):
    """The body of `CallThunk.typed` for a closure of n arguments of types A0... returning R (or Void).
    Both forms capture only `captured`, one object, which Swift then passes as each function's context as
    it is: one allocation where a context per form would be two. The same object is the closure's own
    register entry when its types are one of the common shapes (see `SHAPES`).

    A debug build runs no generic code per call: up to OPAQUE_MAX arguments it calls the closure through
    `cffi_call_opaque` (OpaqueBody), past it in pack form (PackFunction), as the variadic overloads do; the
    straight-line register form is an optimized build's.

    With `layer`, the body of `CallThunk.typed(_:layer:)`, which also hands out the `Captured` object its
    forms capture (a delegate's plain layer of these types), or, where they capture none (pack form), one
    made for the layer alone. Through a pointer rather than a returned tuple: a tuple copied the thunk
    through its value witnesses; and set before the thunk is made, not after: a thunk kept in a local
    while the layer was looked at was copied, a retain and a release for each of its references."""
    _, _, args, _, _, _ = arity(n)
    prepare_lines = [f"        let a{i} = try A{i}.checkedCType()" for i in range(n)]
    key = "returnType.scalarCode"
    for i in range(n):
        key = f"a{i}.appendingKey({key})"
    arg_list = ", ".join(f"a{i}" for i in range(n))
    prepare_lines.append(f"        let prepared = try PreparedSignature.prepared(key: {key}) {{ CSignature(returnType, [{arg_list}]) }}")
    prepare = "\n".join(prepare_lines)
    reg_var = "var arguments = ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)\n                " if n else ""
    reg_args = ", ".join("arguments.next()" for _ in range(n))
    agree = "".join(f" && registerClassAgrees(A{i}.self, a{i})" for i in range(n))
    fn = "(" + ", ".join(f"A{i}" for i in range(n)) + ") -> " + ("Void" if void else "R")
    types = ", ".join(f"A{i}" for i in range(n))
    # The shape, asked of the types once (a constant once specialized; in a debug build one call of
    # generic code per closure made), told to the object and chosen by for the thunk's `shape:`.
    shape = shape_of(n, "Void" if void else "R")
    shape_line = "" if shape == "0" else f"let shape = {shape}\n        "
    shape_arg = "0" if shape == "0" else "shape"
    make = (f"{shape_line}let captured = CapturedVoid{n}{'<' + types + '>' if n else ''}(closure, shape: {shape_arg})" if void
            else f"{shape_line}let captured = Captured{n}<{', '.join([types, 'R']) if n else 'R'}>(closure, returnType.widening, shape: {shape_arg})")
    return_type = "CType.void" if void else "try R.checkedCType()"
    result_agrees = "" if void else " && registerClassAgrees(R.self, returnType)"
    if void:
        register_call = f"""                {reg_var}captured.closure({reg_args})
                return .zero"""
        array_call = f"""{{ [captured] _, arguments in
            captured.closure({args})
        }}"""
    else:
        register_call = f"""                {reg_var}return registerResult(captured.closure({reg_args}))"""
        array_call = f"""{{ [captured] result, arguments in
            storeResult(captured.closure({args}), to: result, captured.widening)
        }}"""
    register_body = f"""RegisterBody {{ [captured] i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7 in
{register_call}
            }}"""
    keep = "layer?.pointee = captured\n        " if layer else ""
    # Nil where the types cannot be a shape; else chosen by the shape worked out above, not by the byte the
    # object stores: that is not folded, and its check kept the thunk too large to be inlined into a
    # delegate's implement.
    shape = "nil" if shape == "0" else "shape != 0 ? captured.unretainedShape : nil"
    if n <= OPAQUE_MAX:
        return f"""        let returnType = {return_type}
{prepare}
        {make}
        #if DEBUG
        let opaque = OpaqueBody.call(captured.closure, prepared)  // no generic code per call
        #else
        let opaque: OpaqueCall? = nil
        #endif
        var registers = opaque?.body
        if registers == nil && prepared.takesRegisters{result_agrees}{agree} {{
            registers = {register_body}
        }}
        {keep}return CallThunk(prepared: prepared, swiftType: ({fn}).self, registers: registers, opaque: opaque, shape: {shape}) {array_call}"""
    # Past OPAQUE_MAX arguments the fixed arity serves an optimized build's register form. Where the
    # arguments do not all arrive in registers, libffi's array (or the array entry's) is handed to the
    # closure element by element (PackFunction.spreading). A debug build runs the closure in pack form, as
    # the variadic overloads do, which runs no generic code per call either.
    store = f"closure({args})" if void else f"storeResult(closure({args}), to: result, widening)"
    nested_array_call = array_call.replace("\n", "\n    ")
    aligned = " && ".join(f"PackFunction.alignment(of: A{i}.self) <= 8" for i in range(n))
    # In pack form no object holds the closure with its types: the layer gets one (its widening unused:
    # `next` calls the closure, never the object's libffi body). Given no layer, nothing is made.
    own_layer = f"layer?.pointee = Captured{n}<{types}, R>(closure, .none, shape: {shape_of(n, 'R')})\n        " if layer and not void else ""
    return f"""        #if !DEBUG
        let returnType = {return_type}
{prepare}
        if prepared.takesRegisters{result_agrees}{agree} {{
            {make}
            {keep.replace(chr(10) + "        ", chr(10) + "            ")}return CallThunk(prepared: prepared, swiftType: ({fn}).self, registers: {register_body}, shape: {shape}) {nested_array_call}
        }}
        if {aligned} {{
            {own_layer.replace(chr(10) + "        ", chr(10) + "            ")}return try PackFunction.spreading(closure, count: {n}, widening: returnType.widening).thunk(prepared.signature, swiftType: ({fn}).self)
        }}
        #endif
        {own_layer}return try packed(closure, returning: {return_type}) {{ {"_, arguments, _" if void else "result, arguments, widening"} in
            {store}
        }}"""


def shape_of(n, result):
    """Which shape closures of n arguments are (see `ShapeEntry`): `CallbackShapes`' answer where n arguments
    make any shape (a constant once specialized), else none ("0")."""
    if not any(len(shape[0]) == n for shape in SHAPES):
        return "0"
    return "CallbackShapes.shape(" + "".join(f"A{i}.self, " for i in range(n)) + f"returning: {result}.self)"


def captured_class(n):
    """The objects the two forms of a generic typed thunk share as their context (see typed_thunk_body):
    one for a result, one for none (a `() -> Void` stored as `() -> R` would be wrapped in a thunk). Each
    is a `ShapeEntry` whose entry is its shape's, when its types are one of `SHAPES`; the one for a result
    is also the `TypedEntry` a delegate's override calls directly (see `forward_function`)."""
    types = ", ".join(f"A{i}" for i in range(n))
    return f"""
/// What both forms of a typed thunk of {counted(n)} run: the user's closure and how its result is widened.
/// A closure that captures one object and nothing else has that object as its context, so the argument
/// array and register forms capturing this share one allocation. For one of the common callback shapes
/// it is also the closure's own register entry (see ``CallbackShapes``), and in a delegate the plain layer
/// an override of the same types calls directly (see ``TypedEntry``).
@usableFromInline
final class Captured{n}<{', '.join([types, 'R']) if n else 'R'}>: TypedEntry, @unchecked Sendable {{  // Immutable; the closure is @Sendable.
    // The widening first, then the closure at the next word: a 40-byte object, which malloc serves from
    // a 48-byte chunk (the widening after the closure made it 41 bytes, served from a 64-byte chunk).
    @usableFromInline let widening: ReturnWidening
    @usableFromInline let closure: @Sendable ({types}) -> R

    @inlinable
    init(_ closure: @escaping @Sendable ({types}) -> R, _ widening: ReturnWidening, shape: UInt8) {{
        self.closure = closure
        self.widening = widening
        super.init(shape: shape)
    }}

    @usableFromInline override var functionType: ObjectIdentifier {{ ObjectIdentifier((({types}) -> R).self) }}
}}

/// ``Captured{n}`` for a closure of {counted(n)} that returns nothing.
@usableFromInline
final class CapturedVoid{n}{'<' + types + '>' if n else ''}: ShapeEntry, @unchecked Sendable {{  // Immutable; the closure is @Sendable.
    @usableFromInline let closure: @Sendable ({types}) -> Void

    @inlinable
    init(_ closure: @escaping @Sendable ({types}) -> Void, shape: UInt8) {{
        self.closure = closure
        super.init(shape: shape)
    }}
}}
"""


def block(n):
    """The declarations for n arguments: those of TypedThunks.generated.swift, and those of
    DelegateEntryPoints.generated.swift."""
    generics, types, args, checked, params, names = arity(n)
    g_r = ", ".join(generics + ["R: CValue"])
    g_v = ", ".join(generics)
    g_v_decl = f"<{g_v}>" if g_v else ""
    g_any = ", ".join(generics + ["R"])
    g_m_any = ", ".join(["Member"] + generics + ["R"])
    t = ", ".join(types)
    fn_r = f"({t}) -> R"
    fn_v = f"({t}) -> Void"
    next_r = ", ".join(types + ["R"])
    next_v = ", ".join(types + ["Void"])
    comma_names = (", " + names) if names else ""
    comma_t = (", " + t) if t else ""
    fwd_literal = forward_call(n)
    # Only a closure whose result C receives has a typed layer (the constrained form's, as before the
    # forms were one): an override above forwards to any other as to a C function. Zero arguments have no
    # typed layer: no override calls one directly.
    typed_plain = ", typed: layer" if n > 0 else ""
    # The thunk made in place, as the enum's payload: a `let` of it first was one more copy.
    plain_thunk = "CallThunk.typed(anyResult: body, layer: &layer)" if n > 0 else "CallThunk.typed(anyResult: body)"
    typed_override = f", typed: Override{n}(body)" if n > 0 else ""
    g_m_r = ", ".join(["Member"] + generics + ["R: CValue"])
    g_m_v = ", ".join(["Member"] + generics)
    metatypes = "".join(f"A{i}.self, " for i in range(n))
    reg_params = "i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7"
    reg_var = "var arguments = ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)\n                " if n else ""
    reg_args = ", ".join("arguments.next()" for _ in range(n))
    # Observers read the registers the plan spilled once for all of them; the copy loads only the
    # registers the arguments take.
    obs_params = "registers" if n else "_"
    obs_var = "var arguments = ArgumentRegisters(reading: registers)\n                " if n else ""
    reg_args_comma = (", " + reg_args) if n else ""
    agree = "".join(f" && registerClassAgrees(A{i}.self, a{i})" for i in range(n))
    obs_prepare = "".join(f"        let a{i} = try A{i}.checkedCType()\n" for i in range(n))
    obs_types = ", ".join(f"a{i}" for i in range(n))
    agree_sig = "".join(f"\n            && registerClassAgrees(A{i}.self, signature.argumentTypes[{i}])" for i in range(n))
    thunks = mark(n) + captured_class(n) + f'''
extension CallThunk {{
    @inlinable
    static func typed<{g_r}>(_ closure: @escaping @Sendable {fn_r}) throws -> CallThunk {{
        try typed(closure, layer: nil)
    }}

    /// `typed`, setting `layer`'s pointee to the `Captured` object both its forms capture, or one of its
    /// own where they capture none (pack form): a delegate's plain layer of these types, which an
    /// override of the same types calls directly. A pointer rather than an `inout`: given nil, the store
    /// is gone where this is inlined.
    @inlinable
    static func typed<{g_r}>(_ closure: @escaping @Sendable {fn_r}, layer: UnsafeMutablePointer<TypedEntry?>?) throws -> CallThunk {{
{typed_thunk_body(n, False, layer=True)}
    }}

    @inlinable
    static func typed{g_v_decl}(_ closure: @escaping @Sendable {fn_v}) throws -> CallThunk {{
{typed_thunk_body(n, True)}
    }}

    /// `typed` for a closure whose result type is left open (see ``ResultCheck``).
    @inlinable
    static func typed<{g_any}>(anyResult closure: @escaping @Sendable {fn_r}) throws -> CallThunk {{
        if R.self == Void.self {{ return try typed(closure as! @Sendable {fn_v}) }}
        func thunk<Result: CValue>(returning _: Result.Type) throws -> CallThunk {{ try CallThunk.typed(closure as! @Sendable ({t}) -> Result) }}
        guard let result = ResultCheck.cValue(R.self) else {{ return try typed {{ ({params}) in _ = closure({names}) }} }}
        return try thunk(returning: result)
    }}

    /// `typed(_:layer:)` for a closure whose result type is left open: a layer for every ``CValue``
    /// result, none for any other.
    @inlinable
    static func typed<{g_any}>(anyResult closure: @escaping @Sendable {fn_r}, layer: UnsafeMutablePointer<TypedEntry?>) throws -> CallThunk {{
        guard R.self != Void.self, let result = ResultCheck.cValue(R.self) else {{ return try typed(anyResult: closure) }}
        func thunk<Result: CValue>(returning _: Result.Type) throws -> CallThunk {{
            try CallThunk.typed(closure as! @Sendable ({t}) -> Result, layer: layer)
        }}
        return try thunk(returning: result)
    }}
}}

extension CClosure {{
    /// A C function pointer whose signature comes from the closure's Swift types (fixed-arity form of
    /// the variadic initializer, chosen by the compiler for speed).
    @inlinable
    public convenience init<{g_any}>(_ body: @escaping @Sendable {fn_r}) throws {{
        try self.init(thunk: CallThunk.typed(anyResult: body))
    }}
}}

extension CCallback {{
    /// A one-shot C function pointer (fixed-arity form of `oneShot(_:)`).
    @inlinable
    public static func oneShot<{g_any}>(_ body: @escaping @Sendable {fn_r}) throws -> CCallback {{
        try OneShot.make(CallThunk.typed(anyResult: body))
    }}
}}

extension NotifiedCallback {{
    /// A C function pointer released by C (fixed-arity form of `init(_:)`).
    @inlinable
    public init<{g_any}>(_ body: @escaping @Sendable {fn_r}) throws {{
        self.init(releasing: try CClosure(thunk: CallThunk.typed(anyResult: body), joinsScope: false))
    }}
}}
'''
    delegates = mark(n) + forward_function(n) + f'''
extension OverrideThunk {{
    @inlinable
    static func typed<{g_r}>(_ closure: @escaping @Sendable (Next<{next_r}>{comma_t}) -> R) throws -> OverrideThunk {{
        let signature = CSignature(try R.checkedCType(), [{checked}])
        let widening = signature.returnType.widening
        var registers: OverrideThunk.RegisterBody?
        if OverrideThunk.takesRegisters(signature)
            && registerClassAgrees(R.self, signature.returnType){agree_sig} {{
            registers = OverrideThunk.RegisterBody {{ context, {reg_params} in
                {reg_var}return registerResult(closure(Next(context) {{ {fwd_literal} }}{reg_args_comma}))
            }}
        }}
        return OverrideThunk(signature: signature, registers: registers) {{ context, result, arguments in
            storeResult(closure(Next(context) {{ {fwd_literal} }}{", " + args if args else ""}), to: result, widening)
        }}
    }}

    @inlinable
    static func typed{g_v_decl}(_ closure: @escaping @Sendable (Next<{next_v}>{comma_t}) -> Void) throws -> OverrideThunk {{
        let signature = CSignature(.void, [{checked}])
        var registers: OverrideThunk.RegisterBody?
        if OverrideThunk.takesRegisters(signature){agree_sig} {{
            registers = OverrideThunk.RegisterBody {{ context, {reg_params} in
                {reg_var}closure(Next(context) {{ {fwd_literal} }}{reg_args_comma})
                return .zero
            }}
        }}
        return OverrideThunk(signature: signature, registers: registers) {{ context, _, arguments in
            closure(Next(context) {{ {fwd_literal} }}{", " + args if args else ""})
        }}
    }}
}}

extension DynamicDelegate {{
    /// Implements `method` (fixed-arity form of the variadic `implement`).
    @inlinable @discardableResult
    public func implement<{g_any}>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false, _ body: @escaping @Sendable {fn_r}
    ) throws -> Registration {{
        {"var layer: TypedEntry?" + chr(10) + "        return " if n > 0 else ""}try push(method, key: key, once: once, .plain({plain_thunk}){typed_plain})
    }}

    /// Adds a layer on top of `method` (fixed-arity form of the variadic `override`).
    @inlinable @discardableResult
    public func override<{g_r}>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<{next_r}>{comma_t}) -> R
    ) throws -> Registration {{
        try push(method, key: key ?? uniqueKey(), once: once, .override(OverrideThunk.typed(body)){typed_override})
    }}

    /// Adds a layer on top of a `void` method (fixed-arity form).
    @inlinable @discardableResult
    public func override{g_v_decl}(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<{next_v}>{comma_t}) -> Void
    ) throws -> Registration {{
        try push(method, key: key ?? uniqueKey(), once: once, .override(OverrideThunk.typed(body)))
    }}

    /// Observes the calls of `method` (fixed-arity form of the variadic `observe`).
    @inlinable
    public func observe{g_v_decl}(
        _ method: String, _ timing: ObservationTiming, owner: AnyObject? = nil, _ body: @escaping @Sendable {fn_v}
    ) throws -> ObservationToken {{
{obs_prepare}        var registers: Observer.RegisterBody?
        if RegisterPath.isAvailable{agree} {{
            registers = Observer.RegisterBody {{ _, {obs_params} in
                {obs_var}body({reg_args})
            }}
        }}
        return try addObserver(
            method, timing, owner: owner, arguments: [{obs_types}], result: nil, registers: registers
        ) {{ _, _, arguments in
            body({args})
        }}
    }}
}}

extension DynamicDelegate {{
    /// Calls `body` after every call of `method` with the result and the arguments (fixed-arity form of
    /// the variadic `observeResult`).
    @inlinable
    public func observeResult<{g_r}>(
        _ method: String, owner: AnyObject? = nil, _ body: @escaping @Sendable (R{comma_t}) -> Void
    ) throws -> ObservationToken {{
        let returnType = try R.checkedCType()
{obs_prepare}        var registers: Observer.RegisterBody?
        if RegisterPath.isAvailable && registerClassAgrees(R.self, returnType){agree} {{
            registers = Observer.RegisterBody {{ result, {obs_params} in
                {obs_var}body(resultValue(result){reg_args_comma})
            }}
        }}
        return try addObserver(
            method, .after, owner: owner, arguments: [{obs_types}], result: returnType, registers: registers
        ) {{ _, result, arguments in
            body(UnsafeRawPointer(result.unsafelyUnwrapped).loadUnaligned(as: R.self){", " + args if args else ""})
        }}
    }}
}}

extension BlockDelegateProtocol where Self: BlockDelegate {{
    /// Implements `method` with a closure that receives this object first (fixed-arity form of the
    /// variadic `implement(_:key:once:_:)`).
    @inlinable @discardableResult
    public func implement<{g_any}>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false, _ body: @escaping (Self{comma_t}) -> R
    ) throws -> Registration {{
        // The object owns the delegate that owns this closure, so it outlives every call C may make; the
        // closure runs on the thread C calls from, as every BlockDelegate closure does.
        nonisolated(unsafe) unowned(unsafe) let owner = self
        nonisolated(unsafe) let body = body
        return try dynamicDelegate.push(method, key: key, once: once, .plain(CallThunk.typed(anyResult: {{ ({params}) -> R in
            body(owner{comma_names})
        }})))
    }}
}}

#if compiler(>=6.3)
extension TypedDelegate {{
    /// Implements the member a key path literal names, with the closure's types taken from the member's
    /// (fixed-arity form of the variadic key-path `implement`).
    @inlinable @discardableResult @_nonoverride  // As in TypedDelegate.swift (6.2.3 +assertions).
    public func implement<{g_any}>(
        _ member: (Table) -> ({fn_r})?, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable {fn_r}
    ) throws -> Registration {{
        try implement(
            methodName(readingNonNull: {{ member($0) != nil }}, closureType: SwiftTypeName.functionType({metatypes}returning: R.self)), key: key, once: once, body)
    }}
}}
#endif

extension TypedDelegate {{
    /// Implements the member `member` (fixed-arity form of the variadic key-path `implement`). The closure
    /// must state its parameter types, `{{ (context: UnsafeMutableRawPointer?, value: Int64) -> Int64 in … }}`:
    /// Swift cannot take them from a `KeyPath` ("cannot infer type of closure parameter"). A key path
    /// literal takes the form above with Swift 6.3 and later.
    @inlinable @discardableResult @_nonoverride  // As in TypedDelegate.swift (6.2.3 +assertions).
    @_disfavoredOverload  // As in TypedDelegate.swift.
    public func implement<{g_m_any}>(
        _ member: KeyPath<Table, Member>, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable {fn_r}
    ) throws -> Registration {{
        try implement(methodName(member, closureType: SwiftTypeName.functionType({metatypes}returning: R.self)), key: key, once: once, body)
    }}

    /// Adds a layer on top of the member `member` (fixed-arity form of the variadic key-path `override`).
    /// The closure must state its parameter types, as for `implement`.
    @inlinable @discardableResult @_nonoverride  // As in TypedDelegate.swift (6.2.3 +assertions).
    public func override<{g_m_r}>(
        _ member: KeyPath<Table, Member>, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<{next_r}>{comma_t}) -> R
    ) throws -> Registration {{
        try override(methodName(member, closureType: SwiftTypeName.functionType({metatypes}returning: R.self)), key: key, once: once, body)
    }}

    /// Adds a layer on top of a member returning `void` (fixed-arity form).
    @inlinable @discardableResult @_nonoverride  // As in TypedDelegate.swift (6.2.3 +assertions).
    public func override<{g_m_v}>(
        _ member: KeyPath<Table, Member>, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<{next_v}>{comma_t}) -> Void
    ) throws -> Registration {{
        try override(methodName(member, closureType: SwiftTypeName.functionType({metatypes}returning: Void.self)), key: key, once: once, body)
    }}
}}
'''
    return thunks, delegates


def forward_call(n):
    """The closure a `Next` of n arguments stores: a literal, so that Swift emits it in the form `Next`
    stores (the most general one) with `forward` inlined into it, where a reference to the generic
    function `forward` would be wrapped in a conversion thunk, one more call per level."""
    if n == 0:
        return "forwardAnyArity($0)"
    return "forward(" + ", ".join(f"${i}" for i in range(n + 1)) + ")"


def forward_function(n):
    """`Next`'s call for n arguments: the values and the pointer array libffi wants, on the stack."""
    if n == 0:
        return ""
    generics = ", ".join([f"A{i}: CValue" for i in range(n)] + ["R"])
    params = ", ".join(f"_ a{i}: A{i}" for i in range(n))
    body = "    var " + ", ".join(f"a{i} = a{i}" for i in range(n)) + "\n"
    opening = "    return " + " ".join(f"withUnsafeMutablePointer(to: &a{i}) {{ p{i} in" for i in range(n)) + "\n"
    pointer_type = "(" + ", ".join(["UnsafeMutableRawPointer?"] * n) + ")"
    pointers = ", ".join(f"UnsafeMutableRawPointer(p{i})" for i in range(n))
    tuple_value = pointers if n > 1 else pointers
    inner = f"""        var pointers: {pointer_type} = ({tuple_value})
        return withUnsafeMutablePointer(to: &pointers) {{ list in
            list.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: {n}) {{ arguments in
                withUnsafeTemporaryAllocation(byteCount: max(MemoryLayout<R>.size, 16), alignment: 16) {{ result in
                    context.invoke(result.baseAddress.unsafelyUnwrapped, arguments)
                    return UnsafeRawPointer(result.baseAddress.unsafelyUnwrapped).loadUnaligned(as: R.self)
                }}
            }}
        }}
"""
    closing = "    " + " ".join("}" for _ in range(n)) + "\n"
    classes = " | ".join(f"(travelsInSSE(A{i}.self) ? {1 << i} : 0)" for i in range(n)) + " | (travelsInSSE(R.self) ? RegisterLayout.sseResult : 0)"
    appends = "".join(f"        registers.append(a{i})\n" for i in range(n))
    types = ", ".join([f"A{i}" for i in range(n)] + ["R"])
    plain_fn = "(" + ", ".join(f"A{i}" for i in range(n)) + ") -> R"
    values = ", ".join(f"a{i}" for i in range(n))
    forward_literal = forward_call(n)
    return f"""
/// An override's closure of {n} argument{"" if n == 1 else "s"}, with its Swift types.
@usableFromInline
final class Override{n}<{", ".join([f"A{i}: CValue" for i in range(n)] + ["R"])}>: TypedEntry, @unchecked Sendable {{  // Immutable; the closure is the user's @Sendable one.
    @usableFromInline let call: (Next<{types}>, {", ".join(f"A{i}" for i in range(n))}) -> R
    @inlinable init(_ call: @escaping (Next<{types}>, {", ".join(f"A{i}" for i in range(n))}) -> R) {{
        self.call = call
        super.init()
    }}

    @usableFromInline override var functionType: ObjectIdentifier {{ ObjectIdentifier(({plain_fn}).self) }}
}}

/// What lies below an override, called with {n} argument{"" if n == 1 else "s"}: directly when the layer below has
/// these very Swift types, else through ``forwardUntyped``. Inlined into each `Next`'s forwarding closure,
/// so that a level of the stack costs that closure and the layer's own call.
@inlinable @inline(__always)
func forward<{generics}>(_ context: CallContext, {params}) -> R {{
    if let (entry, kind) = context.typedBelow {{
        // The plan matched the types when it was built: the layer below is a Captured{n} (a plain layer's
        // typed thunk) or an Override{n} of these very types.
        if kind == .plain {{
            return entry._withUnsafeGuaranteedRef {{ unsafeDowncast($0, to: Captured{n}<{types}>.self).closure({values}) }}
        }}
        let next = Next<{types}>(context.below) {{ {forward_literal} }}
        return entry._withUnsafeGuaranteedRef {{ unsafeDowncast($0, to: Override{n}<{types}>.self).call(next, {values}) }}
    }}
    if let original = context.originalBelow {{
        // Past the stack of a plan that runs in registers: these types put the arguments where the
        // original takes them (see ``SlotPlan/originalInRegisters``).
        var registers = ArgumentRegisters()
{appends}        return resultValue(registers.call(original))
    }}
    return forwardUntyped(context, {values})
}}

/// ``forward`` when the layer below has other Swift types, or there is none: in register form when the
/// plan runs so (past the stack, a direct call of the original), else laid out for libffi and run
/// through the slot's plan. Out of line, so that the typed case saves no registers for it.
@inlinable @inline(never)
func forwardUntyped<{generics}>(_ context: CallContext, {params}) -> R {{
    var registers = ArgumentRegisters(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
{appends}    if registers.fits, let result = context.invoke(classes: {classes}, registers.integers, registers.sse) {{ return resultValue(result) }}
    return forwardLaidOut(context, {values})
}}

/// ``forward`` for {n} argument{"" if n == 1 else "s"} laid out for libffi and run through the slot's plan. Out of line, so
/// that the direct cases above need no stack array.
@inlinable @inline(never)
func forwardLaidOut<{generics}>(_ context: CallContext, {params}) -> R {{
{body}{opening}{inner}{closing}}}
"""


SLOT_MAX = 12
# CFunction.call: C functions take more arguments than callbacks do (a typed call past 6 goes through
# libffi, where a pack would load each argument through its metadata).
CALL_MAX = 12
# Variadic closures, from 1 fixed argument (C before C23 requires one): C hooks have few.
VARIADIC_MAX = 6


def slot_block(n):
    """`@Slot` initializers for closure properties of n arguments: a property's closure type fixes its
    arity, so each arity has its own (a parameter pack cannot stand for a stored function type)."""
    generics = [f"A{i}: CValue" for i in range(n)]
    types = ", ".join(f"A{i}" for i in range(n))
    metatypes = ", ".join(f"A{i}.self" for i in range(n))
    comma_metatypes = (", " + metatypes) if n else ""
    params = ", ".join(f"a{i}: A{i}" for i in range(n))
    names = ", ".join(f"a{i}" for i in range(n))
    g_r = ", ".join(generics + ["R: CValue"])
    g_v = ", ".join(generics)
    g_v_decl = f"<{g_v}>" if g_v else ""
    g_m_r = ", ".join(["Table", "Member"] + generics + ["R: CValue"])
    g_m_v = ", ".join(["Table", "Member"] + generics)
    metatype_list = "".join(f"A{i}.self, " for i in range(n))
    return mark(n) + f'''
extension Slot {{
    /// A slot for the method named `method`, with the C signature of the property's closure type: {n}
    /// argument{"" if n == 1 else "s"}.
    @inlinable
    public init<{g_r}>(_ method: String) where Function == ({types}) -> R {{
        self.init(method: method, signature: Result {{ try CSignature.of(R.self{comma_metatypes}) }}) {{ closure in
            // The closure runs on the thread C calls from, as every BlockDelegate closure does.
            nonisolated(unsafe) let closure = closure
            return try CallThunk.typed {{ ({params}) -> R in closure({names}) }}
        }}
    }}

    /// A slot for a method returning `void`: {n} argument{"" if n == 1 else "s"}.
    @inlinable
    public init{g_v_decl}(_ method: String) where Function == ({types}) -> Void {{
        self.init(method: method, signature: Result {{ try CSignature.of(CVoid.self{comma_metatypes}) }}) {{ closure in
            nonisolated(unsafe) let closure = closure
            return try CallThunk.typed {{ ({params}) in closure({names}) }}
        }}
    }}

    /// A slot for a function-pointer member of a C struct Swift imports, for a ``BlockDelegate`` created
    /// with ``BlockDelegate/init(for:file:line:)`` for that struct: {n} argument{"" if n == 1 else "s"}. The property's
    /// closure type must be the member's Swift function type exactly (checked when the owner is created).
    @inlinable
    public init<{g_m_r}>(_ member: KeyPath<Table, Member>) where Function == ({types}) -> R {{
        self.init(
            member, closureType: SwiftTypeName.functionType({metatype_list}returning: R.self),
            signature: Result {{ try CSignature.of(R.self{comma_metatypes}) }}
        ) {{ closure in
            nonisolated(unsafe) let closure = closure
            return try CallThunk.typed {{ ({params}) -> R in closure({names}) }}
        }}
    }}

    /// A slot for a function-pointer member returning `void` of a C struct Swift imports: {n}
    /// argument{"" if n == 1 else "s"}.
    @inlinable
    public init<{g_m_v}>(_ member: KeyPath<Table, Member>) where Function == ({types}) -> Void {{
        self.init(
            member, closureType: SwiftTypeName.functionType({metatype_list}returning: Void.self),
            signature: Result {{ try CSignature.of(CVoid.self{comma_metatypes}) }}
        ) {{ closure in
            nonisolated(unsafe) let closure = closure
            return try CallThunk.typed {{ ({params}) in closure({names}) }}
        }}
    }}
}}
'''


def call_block(n):
    """CFunction.call of n typed arguments: checks that fold to constants, then a direct call in
    registers or libffi's ffi_call with the argument array built in place."""
    generics = [f"A{i}: CValue" for i in range(n)]
    params = ", ".join(f"_ a{i}: A{i}" for i in range(n))
    names = ", ".join(f"a{i}" for i in range(n))
    checks = "".join(f" && matches(A{i}.self, at: {i})" for i in range(n))
    agree = "".join(f" && registerClassAgrees(A{i}.self, A{i}.cType)" for i in range(n))
    appends = "".join(f"\n            registers.append(a{i})" for i in range(n))
    identities = "".join(f"identities[{i + 1}] = CheckedCallTypes.identity(A{i}.self)\n            " for i in range(n))

    # ffi_call's argument array: each value in a variable of its own, nested so the pointers stay valid.
    variables = "".join(f"        var v{i} = a{i}\n" for i in range(n))
    opening = "".join(f"withUnsafeMutablePointer(to: &v{i}) {{ p{i} in " for i in range(n))
    closing = " }" * n
    stores = "".join(f"list[{i}] = UnsafeMutableRawPointer(p{i})\n            " for i in range(n))
    through_libffi = f"""{variables}        return {opening}withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: {max(n, 1)}) {{ list in
            {stores}return libffiCall.call(address, arguments: list.baseAddress.unsafelyUnwrapped, returning: R.self)
        }}{closing}"""

    def body(result, checking):
        returns = f" && returns({result}.self)" if checking else ""
        agree_result = f" && registerClassAgrees({result}.self, {result}.cType)" if checking else ""
        variadic = "" if n == 0 else f"""
            if isVariadic, let result = variadicCall({names}, returning: {result}.self, checkingResult: {"true" if checking else "false"}) {{
                return result
            }}"""
        return f"""        let fits = argumentCodes.count == {n}{returns}{checks}
        if fits && callsInRegisters{agree_result}{agree} {{
            {"var" if n else "let"} registers = ArgumentRegisters(){appends}
            if registers.fits {{ return resultValue(registers.call(address), as: {result}.self) }}
        }}
        guard fits, let libffiCall else {{{variadic}
            return try checkedCall({names + ", " if n else ""}returning: {result}.self, checkingResult: {"true" if checking else "false"})
        }}
        return callThroughLibffi(libffiCall{", " + names if n else ""}, returning: {result}.self)"""

    g_r = ", ".join(generics + ["R: CValue"])
    g_v = f"<{', '.join(generics)}>" if generics else ""
    comma = ", " if n else ""
    return mark(n) + f'''
extension CFunction {{
    /// Calls the function with {n} typed argument{"" if n == 1 else "s"} (fixed-arity form of the
    /// variadic `call`, chosen by the compiler for speed).
    @inlinable
    public func call<{g_r}>({params}{comma}returning: R.Type = R.self) throws -> R {{
{body("R", True)}
    }}

    /// Calls the function, ignoring what it returns (fixed-arity form).
    @inlinable
    public func call{g_v}({params}) throws {{
        _ = try callDiscardingResult({names})
    }}

    @inlinable
    func callDiscardingResult{g_v}({params}) throws -> CVoid {{
{body("CVoid", False)}
    }}

    /// A call whose types are not scalars the signature names by code (a struct, an `Int` for a `size_t`):
    /// straight to libffi when these types passed the full check before (``CheckedCallTypes``), else
    /// the general path, which checks them. Out of line, so that the common call stays small enough to
    /// be inlined.
    @inlinable @inline(never)
    func checkedCall<{g_r}>({params}{comma}returning: R.Type, checkingResult: Bool) throws -> R {{
        let known = withUnsafeTemporaryAllocation(of: UInt.self, capacity: {n + 1}) {{ identities in
            identities[0] = CheckedCallTypes.resultIdentity(R.self, checkingResult: checkingResult)
            {identities}return checkedCalls.contains(UnsafeBufferPointer(identities))
        }}
        if let libffiCall, !isVariadic, known {{
            return callThroughLibffi(libffiCall{", " + names if n else ""}, returning: R.self)
        }}
        return try perform({names + ", " if n else ""}returning: R.self, checkingResult: checkingResult)
    }}

    /// Calls the function through libffi with these arguments, which fit its signature: out of line, as
    /// ``checkedCall``, beside which its call costs nothing that matters.
    @inlinable @inline(never)
    func callThroughLibffi<{g_r}>(_ libffiCall: LibffiCall{comma}{params}, returning: R.Type) -> R {{
{through_libffi}
    }}
{variadic_call(n) if n else ""}}}
'''


def variadic_call(n):
    """A variadic function's call of n typed arguments, straight-line: in registers where they take
    registers only (promoted past the named ones), else through libffi, the key of the prepared call made
    of the types (constants once specialized), each argument stored in its slot, promoted past the named
    ones. Nil when the slow path must check, prepare or refuse the call (the first call with these types)."""
    generics = ", ".join([f"A{i}: CValue" for i in range(n)] + ["R: CValue"])
    params = ", ".join(f"_ a{i}: A{i}" for i in range(n))
    checks = "".join(f"\n        if named > {i} {{ fits = fits && matches(A{i}.self, at: {i}) }}" for i in range(n))
    keys = "".join(f"\n        if named <= {i} {{ key = appendingVariadicKey(A{i}.self, key) }}" for i in range(n))
    agree = "".join(
        f"\n            agrees = agrees && registerClassAgrees(A{i}.self, named > {i} ? A{i}.cType : A{i}.cType.promotedForVariadicCall)"
        for i in range(n))
    appends = "".join(
        f"\n            if named > {i} {{ registers.append(a{i}) }} else {{ registers.appendPromoted(a{i}) }}" for i in range(n))
    offsets = "".join(f"\n        let o{i + 1} = o{i} + argumentSlotSize(MemoryLayout<A{i}>.size)" for i in range(n))
    stores = "".join(f"\n                storeArgument(a{i}, to: base + o{i}, promoted: named <= {i})\n                list[{i}] = base + o{i}" for i in range(n))
    return f'''
    /// A variadic function's call (fixed-arity form of `callVariadic`), or nil for the general path.
    @inlinable
    func variadicCall<{generics}>({params}, returning: R.Type, checkingResult: Bool) -> R? {{
        let named = argumentCodes.count
        var fits = named <= {n} && (!checkingResult || returns(R.self)){checks}
        if fits && variadicCallsInRegisters {{
            var agrees = !checkingResult || registerClassAgrees(R.self, R.cType)
            var registers = ArgumentRegisters(){agree}{appends}
            if agrees && registers.fits {{ return resultValue(registers.callVariadic(address), as: R.self) }}
        }}
        var key = variadicKeyPrefix{keys}
        guard fits, let key, let libffiCall = PreparedSignature.lookupCall(key) else {{ return nil }}
        let function = address
        let o0 = 0{offsets}
        return withUnsafeTemporaryAllocation(byteCount: o{n}, alignment: 16) {{ storage in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: {n}) {{ list in
                let base = storage.baseAddress.unsafelyUnwrapped{stores}
                return libffiCall.call(function, arguments: list.baseAddress.unsafelyUnwrapped, returning: R.self)
            }}
        }}
    }}
'''


# The callback shapes C libraries use most, each with a register entry of its own: code written for the
# shape's concrete types, which reads each argument from its register and calls the user's closure with
# no conversion between (a generic thunk's register form goes through a closure made for any types). The
# generic overloads find it by the closure's types, a comparison of constants once specialized, so there
# is no overload per shape: overloads that differ only in their closure's result type make a closure
# of several statements and no `return` ambiguous.
SHAPES = [
    (["UnsafeRawPointer?", "UnsafeRawPointer?"], "Int32", "int (const void *, const void *)",
     "a comparator (`qsort`, `bsearch`, `tsearch`)", "comparator"),
    (["UnsafeMutableRawPointer?"], "Void", "void (void *)",
     "a destructor or notification (`GDestroyNotify`, `pthread_key_create`, `sqlite3_result_text`)", "destroy"),
    (["UnsafeMutableRawPointer?"], "Int32", "int (void *)",
     "a callback given only its context (`sqlite3_progress_handler`, `GSourceFunc`)", "context"),
    (["UnsafeMutableRawPointer?"], "UnsafeMutableRawPointer?", "void *(void *)",
     "a thread's start routine (`pthread_create`)", "threadStart"),
    (["UnsafeMutableRawPointer?", "Int32"], "Int32", "int (void *, int)",
     "a context and a count (`sqlite3_busy_handler`)", "busy"),
    (["UnsafeMutableRawPointer?", "UnsafeMutableRawPointer?"], "Void", "void (void *, void *)",
     "an element and a context (`GFunc` for `g_list_foreach`)", "foreach"),
]


def lookup(n, lines):
    """`CallbackShapes.shape` for closures of n arguments."""
    generics = ", ".join([f"A{i}" for i in range(n)] + ["R"])
    params = "".join(f"_: A{i}.Type, " for i in range(n))
    return f"""
    /// The shape these types are (its number in ``entry(_:)``), or 0: a constant once specialized (the
    /// comparisons of metatypes fold), so that a closure of any other types pays nothing for the shapes.
    @inlinable
    static func shape<{generics}>({params}returning _: R.Type) -> UInt8 {{
{"".join(lines)}        return 0
    }}
"""


def shapes_block():
    """`CallbackShapes`: each shape's entry, and the lookup the `Captured` classes make by their types."""
    entries = []
    checks = {}
    numbers = []
    for number, (args, ret, c_name, use, name) in enumerate(SHAPES, start=1):
        n = len(args)
        void = ret == "Void"
        box = f"CapturedVoid{n}<{', '.join(args)}>" if void else f"Captured{n}<{', '.join(args + [ret])}>"
        reg_args = ", ".join("arguments.next()" for _ in range(n))
        call = f"box.closure({reg_args})"
        result = (f"            {call}\n            return 0" if void
                  else f"            return registerResult({call}).integer")
        entries.append(f"""
    /// `{c_name}`, {use}: the entry of a ``{box.split('<')[0]}`` of these types (its result is
    /// never floating, so it has only the integer form).
    @usableFromInline
    static let {name} = RegisterEntry(integer: {{ i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
        Unmanaged<{box}>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef {{ box in
            var arguments = ArgumentRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
{result}
        }}
    }}, floating: nil)
""")
        checks.setdefault(n, []).append(
            f"        if {' && '.join(f'A{i}.self == ({t}).self' for i, t in enumerate(args))} && R.self == ({ret}).self {{ return {number} }}\n")
        numbers.append(f"        case {number}: return {name}\n")
    return f"""
// MARK: The common callback shapes

/// The callback shapes C libraries use most, each with a register entry of its own (see
/// ``ShapeEntry``): code written for the shape's concrete types, which takes each argument from the
/// register C passed it in and calls the user's closure, with no generic conversion between. A typed
/// thunk's ``Captured1`` or ``Captured2`` (or `Void` form) of one of these function types is that entry's
/// context.
@usableFromInline
enum CallbackShapes {{
{"".join(entries)}
    /// The entry of shape number `shape` (see the `shape` lookups below), nil for 0: what a
    /// ``ShapeEntry`` enters by, found without a call through its class.
    @usableFromInline
    static func entry(_ shape: UInt8) -> RegisterEntry? {{
        switch shape {{
{"".join(numbers)}        default: return nil
        }}
    }}
{"".join(lookup(n, lines) for n, lines in sorted(checks.items()))}}}
"""


# Why there are fixed-arity overloads at all, said in the files that hold them beside a variadic form.
WHY = """

Swift does not unroll parameter-pack expansions, so the variadic forms load each argument through a
generic call; the compiler prefers these straight-line overloads, which make a call cost about what
libffi costs."""

# Why the variadic closures have no variadic-generic form, said in both files that hold them.
VARIADIC_WHY = """

A closure type may put a parameter pack before `CVariadicArguments`, but Swift cannot call such a
closure with the pack expanded ("cannot pass value pack expansion to non-pack parameter"), so each count
of fixed arguments has its own overload."""

# What each file holds, said at its top under the line that names the script.
DESCRIPTIONS = {
    "TypedThunks": f"""The typed thunks of closures of 0 to {MAX} arguments, `CallThunk.typed`, with the `Captured` objects
their two forms share, and the entry points that make a C function pointer of such a closure:
`CClosure.init`, `CCallback.oneShot`, `NotifiedCallback.init`.""" + WHY,
    "DelegateEntryPoints": f"""The delegate entry points for closures of 0 to {MAX} arguments: `DynamicDelegate`'s `implement`,
`override`, `observe` and `observeResult`, `BlockDelegateProtocol`'s `implement`, `TypedDelegate`'s
key-path `implement` and `override`; the `OverrideThunk.typed` an override is made of; and the typed
override layers (`Override`) and `forward` functions with which a `Next` calls the layer below (a plain
layer's is its typed thunk's `Captured` object).""" + WHY,
    "SlotInitializers": f"""`@Slot`'s initializers for closure properties of 0 to {SLOT_MAX} arguments, one per arity: a property's
closure type cannot be a parameter pack.""",
    "CFunctionCalls": f"""`CFunction.call` with 0 to {CALL_MAX} typed arguments, and a variadic function's `variadicCall`:
checks that fold to constants, then a direct call in registers or libffi's `ffi_call`.""" + WHY,
    "VariadicThunks": """The closures of variadic C function types, one set per count of fixed arguments: the typed thunk
and `CClosure`'s initializers (`DynamicDelegate`'s `implement` for a variadic method is in
Delegates/VariadicEntryPoints.generated.swift).""" + VARIADIC_WHY,
    "VariadicEntryPoints": """`DynamicDelegate`'s `implement` for a variadic method, one per count of fixed arguments, over the
typed thunks of Closures/VariadicThunks.generated.swift.""" + VARIADIC_WHY,
    "CallbackShapes": """`CallbackShapes`: the callback shapes C libraries use most, each with a register entry of its own,
which the `Captured` objects of TypedThunks.generated.swift find by their types.""",
}


def variadic_block(n):
    """The variadic forms for n fixed arguments, by layer: the typed thunk and `CClosure`'s initializers,
    then `DynamicDelegate`'s `implement` (VARIADIC_WHY says why each count has its own)."""
    generics, types, _, _, params, names = arity(n)
    closure_types = ", ".join(types + ["CVariadicArguments"])
    loads = "".join(f"            let a{i}: A{i} = nextArgument(&cursor)\n" for i in range(n))
    call_names = ", ".join([f"a{i}" for i in range(n)] + ["rest"])
    void_generics = f"<{', '.join(generics)}>" if generics else ""
    value_generics = f"<{', '.join(generics + ['R: CValue'])}>"
    any_generics = f"<{', '.join(generics + ['R'])}>"
    void_params = ", ".join([f"a{i}: A{i}" for i in range(n)] + ["rest: CVariadicArguments"])
    closures = mark(n) + f"""
extension CallThunk {{
    @inlinable
    static func variadic{value_generics}(_ body: @escaping @Sendable ({closure_types}) -> R) throws -> CallThunk {{
        let fixed = try CSignature.of(R.self{"".join(f", A{i}.self" for i in range(n))})
        let widening = fixed.returnType.widening
        return try variadic(fixed) {{ result, arguments, rest in
            var cursor = arguments
{loads}            storeResult(body({call_names}), to: result, widening)
        }}
    }}

    @inlinable
    static func variadic{void_generics}(_ body: @escaping @Sendable ({closure_types}) -> Void) throws -> CallThunk {{
        try variadic {{ ({void_params}) -> CVoid in
            body({call_names})
            return CVoid()
        }}
    }}

    /// `variadic` for a closure whose result type is left open (see ``ResultCheck``).
    @inlinable
    static func variadic{any_generics}(anyResult body: @escaping @Sendable ({closure_types}) -> R) throws -> CallThunk {{
        if R.self == Void.self {{ return try variadic(body as! @Sendable ({closure_types}) -> Void) }}
        func thunk<Result: CValue>(returning _: Result.Type) throws -> CallThunk {{ try CallThunk.variadic(body as! @Sendable ({closure_types}) -> Result) }}
        guard let result = ResultCheck.cValue(R.self) else {{ return try variadic {{ ({void_params}) in _ = body({call_names}) }} }}
        return try thunk(returning: result)
    }}
}}

extension CClosure {{
    /// A C function pointer of a variadic type with {counted(n)} before `...` (see
    /// ``CVariadicArguments``).
    @inlinable
    public convenience init{any_generics}(_ body: @escaping @Sendable ({closure_types}) -> R) throws {{
        try self.init(thunk: CallThunk.variadic(anyResult: body))
    }}
}}
"""
    delegates = mark(n) + f"""
extension DynamicDelegate {{
    /// Implements a variadic method with {counted(n)} before `...`: the closure reads the rest as
    /// ``CVariadicArguments``.
    @inlinable @discardableResult
    public func implement{any_generics}(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable ({closure_types}) -> R
    ) throws -> Registration {{
        try push(method, key: key, once: once, .plain(CallThunk.variadic(anyResult: body)))
    }}
}}
"""
    return closures, delegates


def hidden_from_documentation(body):
    """Marks every public declaration of `body` hidden from DocC: the fixed-arity overloads are the
    variadic declarations' fast forms, written by hand in the same files' layers and documented there, and
    the index would otherwise list each name seven times over."""
    lines = []
    for line in body.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("public "):
            lines.append(line[: len(line) - len(stripped)] + "@_documentation(visibility: internal)")
        lines.append(line)
    return "\n".join(lines)


def write(name, body):
    """Writes `name`.generated.swift into its layer's folder, if its text changed: the line naming the
    script, what the file holds, then `body` (no file imports C: the library's C modules are reached
    through Shim/). Returns the file's path."""
    file_name = f"{name}.generated.swift"
    header = (f"// Generated by {SCRIPT}: do not edit; change the script and run it again.\n//\n"
              + "".join((f"// {line}" if line else "//") + "\n" for line in DESCRIPTIONS[name].split("\n")))
    text = header + hidden_from_documentation(body)
    path = LIBRARY / FOLDERS[name] / file_name
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def main():
    blocks = [block(n) for n in range(MAX + 1)]
    variadic = [variadic_block(n) for n in range(1, VARIADIC_MAX + 1)]
    written = {
        write("TypedThunks", "".join(thunks for thunks, _ in blocks)),
        write("DelegateEntryPoints", "".join(delegates for _, delegates in blocks)),
        write("SlotInitializers", "".join(slot_block(n) for n in range(SLOT_MAX + 1))),
        write("CFunctionCalls", "".join(call_block(n) for n in range(CALL_MAX + 1))),
        write("CallbackShapes", shapes_block()),
        write("VariadicThunks", "".join(closures for closures, _ in variadic)),
        write("VariadicEntryPoints", "".join(delegates for _, delegates in variadic)),
    }
    for stale in LIBRARY.rglob("*.generated.swift"):
        if stale not in written:
            stale.unlink()


if __name__ == "__main__":
    main()
