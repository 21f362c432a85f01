#!/usr/bin/env python3
"""The closure-spelling matrix: every ordinary way to write a closure, for every entry point that takes
one, for the common C callback shapes (and two variadic ones, for the entry points that take those).

Why: which overload Swift picks for a closure literal depends on how the literal is written. A closure of
several statements with no result type written has no result type until one is chosen for it, so two
overloads that differ only in their closure's result type make it ambiguous; an overload added for speed
once broke every such `void (void *)` closure. Any change to an overload set goes through this matrix.

    python3 Scripts/spelling-matrix.py
        writes Tests/DelegateKitTests/SpellingMatrix/*.generated.swift: every case, run by `swift test`,
        which checks the C signature each case makes and that the common shapes reach their own entry.
    python3 Scripts/spelling-matrix.py --typecheck [--jobs N]
        type-checks every case on its own, one compiler run per case, against the debug build's modules
        (`swift build --target DelegateKit` first), and lists every case that does not compile: one
        compiler run over many files stops reporting after the first file with an error.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "Tests/DelegateKitTests/SpellingMatrix"


class Shape:
    def __init__(self, name, c, params, result, value, fallback, entry=None):
        self.name = name            # the method, member and property name
        self.c = c                  # the C signature
        self.params = params        # [(name, Swift type)]
        self.result = result        # Swift result type, "Void" for none
        self.value = value          # a statement (void) or an expression of `result` using the parameters
        self.fallback = fallback    # the same without the parameters
        self.entry = entry          # the shape's own register entry in CallbackShapes, if it has one

    @property
    def void(self):
        return self.result == "Void"

    @property
    def types(self):
        return ", ".join(t for _, t in self.params)


# The six shapes with an entry of their own, common generic ones, and two of many parameters.
SHAPES = [
    Shape("comparator", "int (const void *, const void *)", [("a", "UnsafeRawPointer?"), ("b", "UnsafeRawPointer?")],
          "Int32", "probe.compare(a, b)", "probe.int32", "comparator"),
    Shape("destroy", "void (void *)", [("p", "UnsafeMutableRawPointer?")], "Void", "probe.free(p)", "probe.free(nil)",
          "destroy"),
    Shape("context", "int (void *)", [("p", "UnsafeMutableRawPointer?")], "Int32", "probe.count(p)", "probe.int32",
          "context"),
    Shape("threadStart", "void *(void *)", [("p", "UnsafeMutableRawPointer?")], "UnsafeMutableRawPointer?",
          "probe.pass(p)", "probe.pointer", "threadStart"),
    Shape("busy", "int (void *, int)", [("p", "UnsafeMutableRawPointer?"), ("count", "Int32")], "Int32",
          "probe.retry(p, count)", "probe.int32", "busy"),
    Shape("foreach", "void (void *, void *)", [("element", "UnsafeMutableRawPointer?"), ("data", "UnsafeMutableRawPointer?")],
          "Void", "probe.visit(element, data)", "probe.free(nil)", "foreach"),
    Shape("tick", "void (void)", [], "Void", "probe.tick()", "probe.tick()"),
    Shape("sum", "int64_t (int64_t, int64_t)", [("a", "Int64"), ("b", "Int64")], "Int64", "a &+ b", "probe.int64"),
    Shape("scale", "double (double)", [("x", "Double")], "Double", "x * probe.factor", "probe.factor"),
    Shape("handle", "int (struct opaque *)", [("handle", "OpaquePointer?")], "Int32", "probe.close(handle)", "probe.int32"),
    # Seven and eight parameters: the fixed-arity overloads' last two arities, past which the variadic
    # (pack) overloads take the closure. Every argument in a register; and one on the caller's stack.
    Shape("weigh", "double (double, double, double, double, double, double, double)",
          [(n, "Double") for n in "abcdefg"], "Double", "a * probe.factor + g", "probe.factor"),
    Shape("element", "void (void *, int, int, int, int, int, int, int)",
          [("p", "UnsafeMutableRawPointer?")] + [(n, "Int32") for n in "abcdefg"], "Void", "probe.free(p)",
          "probe.free(nil)"),
]

# Variadic shapes, `R (A…, ...)`: the closure's last parameter is the rest of the arguments. Only the entry
# points that take variadic closures (`takes_variadic`) get them.
VARIADIC_SHAPES = [
    Shape("log", "void (void *, const char *, ...)",
          [("context", "UnsafeMutableRawPointer?"), ("format", "UnsafePointer<CChar>?"), ("arguments", "CVariadicArguments")],
          "Void", "probe.log(format, arguments)", "probe.tick()"),
    Shape("total", "long (int, ...)", [("count", "Int32"), ("arguments", "CVariadicArguments")], "Int",
          "probe.total(count, arguments)", "probe.long"),
]


def parameters(shape, underscore=False, prefix=()):
    items = list(prefix) + [f"_: {t}" if underscore else f"{n}: {t}" for n, t in shape.params]
    return "(" + ", ".join(items) + ")"


# The literal a closure returning only a literal returns, by result type; and the type Swift gives the
# literal where nothing else says (its default literal type).
LITERALS = {"UnsafeMutableRawPointer?": "nil", "OpaquePointer?": "nil", "Int32": "0", "Int64": "0", "Int": "0",
            "Double": "0.0"}
LITERAL_DEFAULTS = {"0": "Int", "0.0": "Double"}


class Body:
    """How a closure's body is written: what it returns (the C result, an element, nothing) and with what;
    `lead` is a statement that does what the body's kind must (a closure that may leave throws)."""
    def __init__(self, result, value, fallback, statement, lead="probe.note()"):
        self.result, self.value, self.fallback, self.statement, self.lead = result, value, fallback, statement, lead

    @property
    def literal(self):
        return None if self.statement else LITERALS[self.result]


def c_body(shape):
    """A closure that is the C function: it returns the shape's result."""
    if shape.void:
        return Body("Void", None, None, (shape.value, shape.fallback))
    return Body(shape.result, shape.value, shape.fallback, None)


def void_body(shape):
    """A closure that returns nothing whatever the shape returns (an observer)."""
    if shape.void:
        return c_body(shape)
    arguments = ", ".join(n for n, _ in shape.params)
    return Body("Void", None, None, (f"probe.see({arguments})", "probe.see()"))


def leaving_body(shape):
    """A closure that may leave the call by throwing a `CallbackExit` (`probe.leave` throws), returning the
    shape's result otherwise."""
    if shape.void:
        return Body("Void", None, None, (f"try probe.leave({shape.value})", f"try probe.leave({shape.fallback})"))
    return Body(shape.result, f"try probe.leave({shape.value})", f"try probe.leave({shape.fallback})", None,
                lead="try probe.leave(())")


def element_body(shape):
    """A closure that returns an element made of the arguments (a stream, `withCCallback`'s `receive`)."""
    arguments = ", ".join(n for n, _ in shape.params)
    return Body("Int", f"probe.element({arguments})", "probe.element()", None)


# The spellings: (name, function of (shape, body, prefix, value_type) -> literal or None when it does not
# apply). `prefix` holds leading parameters of the entry point's own (`Next`, the receiver).
def single(shape, body, prefix):
    params = parameters(shape, prefix=prefix[0])
    return closure(params, None, body.statement[0] if body.statement else body.value, empty=not prefix[0] and not shape.params)


def several(shape, body, prefix, typed=False):
    params = parameters(shape, prefix=prefix[0])
    result = body.result if typed else None
    if body.statement:
        return closure(params, result, f"probe.note(); {body.statement[0]}", empty=not prefix[0] and not shape.params)
    return closure(params, result, f"probe.note(); return {body.value}", empty=not prefix[0] and not shape.params)


def underscore(shape, body, prefix):
    if not shape.params:
        return None
    params = parameters(shape, underscore=True, prefix=prefix[1])
    if body.statement:
        return closure(params, None, f"probe.note(); {body.statement[1]}")
    return closure(params, None, f"probe.note(); return {body.fallback}")


def discarded_first(shape, body, prefix):
    params = parameters(shape, prefix=prefix[0])
    first = "probe.calls.add(1, ordering: .relaxed)"
    rest = body.statement[0] if body.statement else f"return {body.value}"
    return closure(params, None, f"{first}; {rest}", empty=not prefix[0] and not shape.params)


def early_return(shape, body, prefix):
    params = parameters(shape, prefix=prefix[0])
    if body.statement:
        return closure(params, None, f"if probe.stopped {{ return }}; {body.statement[0]}", empty=not prefix[0] and not shape.params)
    return closure(params, None, f"if probe.stopped {{ return {body.fallback} }}; return {body.value}",
                   empty=not prefix[0] and not shape.params)


def capture_list(shape, body, prefix):
    params = parameters(shape, prefix=prefix[0])
    rest = body.statement[0] if body.statement else f"return {body.value}"
    return closure(params, None, f"probe.note(); {rest}", capture="[probe] ")


def literal_only(shape, body, prefix):
    """Several statements whose only `return` is a literal (`nil`, `0`, `0.0`), the result type not
    written and the parameters unused: pthread's start routine as `{ _ in …; return nil }`."""
    if body.literal is None:
        return None
    return closure(parameters(shape, underscore=True, prefix=prefix[1]), None, f"{body.lead}; return {body.literal}")


def closure(params, result, text, capture="", empty=False):
    if empty and not capture and result is None:
        return "{ " + text + " }"
    arrow = f" -> {result}" if result else ""
    return "{ " + capture + params + arrow + " in " + text + " }"


LITERAL_ONLY = "several statements returning only a literal, result type not written"

SPELLINGS = [
    ("a single expression", single),
    ("several statements", lambda s, b, p: several(s, b, p)),
    ("several statements, result type written", lambda s, b, p: several(s, b, p, typed=True)),
    ("unused parameters as _", underscore),
    ("a first statement whose value is discarded", discarded_first),
    ("an early return", early_return),
    ("a capture list", capture_list),
    (LITERAL_ONLY, literal_only),
    ("a closure value in a let", None),  # made by each entry point: the value's type is written in full
]


class EntryPoint:
    """An entry point: `hand(shape, closure, literal)` gives the statements that hand `closure` (a literal,
    or the name of a closure value when `literal` is false) over and end by returning what to check;
    `body` says what the closure returns; `prefix` gives its own leading parameters, named and unnamed."""
    def __init__(self, name, body, hand, prefix=lambda shape: ((), ()), value_type=None, expected=None, sendable=True,
                 takes_variadic=False, literal_type="context"):
        self.name, self.body, self.hand, self.prefix = name, body, hand, prefix
        # Where a closure that returns only a literal and states no result type gets its result type:
        # "context" (a property's type, `Next`'s), "member" (the key path literal's
        # member, with Swift 6.3 and later), or "literal" (nothing: Swift's default literal type, so `nil`
        # does not compile); "refusing" is "literal" for an entry point that then refuses the closure with
        # a signature mismatch.
        self.literal_type = literal_type
        self.value_type = value_type or (lambda shape, body: function_type(shape, body))
        self.expected = expected or (lambda shape: shape.c)
        self.sendable = sendable
        self.shapes = SHAPES + (VARIADIC_SHAPES if takes_variadic else [])


def call(head, arguments, closure, literal):
    """`head(arguments) { closure }` for a literal (a trailing closure, as users write it), else
    `head(arguments, closure)`."""
    if literal:
        return f"{head}({', '.join(arguments)}) {closure}" if arguments else f"{head} {closure}"
    return f"{head}({', '.join(arguments + [closure])})"


def function_type(shape, body, prefix=""):
    types = ", ".join(([prefix] if prefix else []) + [t for _, t in shape.params])
    return f"({types}) -> {body.result}"


def throwing(shape, body, prefix=""):
    return function_type(shape, body, prefix).replace(") ->", ") throws ->", 1)


def next_type(shape):
    return f"Next<{', '.join([t for _, t in shape.params] + [shape.result])}>"


def next_prefix(shape):
    return ((f"next: {next_type(shape)}",), (f"_: {next_type(shape)}",))


def own_entry(shape):
    return f".{shape.entry}" if shape.entry else "nil"


def void_c(shape):
    """The signature of a callback returning nothing with the shape's parameters (a stream's)."""
    names = {"UnsafeRawPointer?": "const void *", "UnsafeMutableRawPointer?": "void *", "Int32": "int",
             "Int64": "int64_t", "Double": "double", "OpaquePointer?": "struct opaque *"}
    return "void (" + (", ".join(names[t] for _, t in shape.params) or "void") + ")"


def quoted(shape):
    return '"' + shape.name + '"'


def key_path(shape):
    return "\\." + shape.name


def then(*lines):
    return "\n" + "\n".join(lines)


ENTRY_POINTS = [
    EntryPoint("CClosure", c_body, lambda s, c, l:
               "let closure = try " + call("CClosure", [], c, l)
               + then(f"try expectOwnEntry(closure, {own_entry(s)})", "return closure.signature"),
               takes_variadic=True, literal_type="literal"),
    EntryPoint("CClosure, leaving by a CallbackExit", leaving_body, lambda s, c, l:
               "let closure = try " + call("CClosure", [], c, l)
               + then("try expectOwnEntry(closure, nil)", "return closure.signature"),
               value_type=throwing, literal_type="literal"),
    EntryPoint("CCallback.oneShot", c_body, lambda s, c, l:
               "let callback = try " + call("CCallback.oneShot", [], c, l)
               + then("defer { callback.discard() }", "return callback.signature"),
               literal_type="literal"),
    EntryPoint("NotifiedCallback", c_body, lambda s, c, l:
               "let notified = try " + call("NotifiedCallback", [], c, l)
               + then("defer { notified.release() }", f"try expectOwnEntry(notified, {own_entry(s)})",
                      "return notified.signature"),
               literal_type="literal"),
    EntryPoint("implement by name", c_body, lambda s, c, l:
               "try " + call("delegate.implement", [quoted(s)], c, l)
               + then(f"return try implemented({quoted(s)}, in: delegate)"),
               takes_variadic=True, literal_type="refusing"),
    EntryPoint("implement by key path", c_body, lambda s, c, l:
               "try " + call("typed.implement", [key_path(s)], c, l)
               + then(f"return try implemented({quoted(s)}, in: typed)"),
               literal_type="member"),
    EntryPoint("implement by name, leaving by a CallbackExit", leaving_body, lambda s, c, l:
               "try " + call("delegate.implement", [quoted(s)], c, l)
               + then(f"return try implemented({quoted(s)}, in: delegate)"),
               value_type=throwing, literal_type="refusing"),
    EntryPoint("override by name", c_body, lambda s, c, l:
               "try " + call("delegate.override", [quoted(s)], c, l)
               + then(f"return try implemented({quoted(s)}, in: delegate)"),
               prefix=next_prefix, value_type=lambda s, b: function_type(s, b, next_type(s))),
    EntryPoint("override by key path", c_body, lambda s, c, l:
               "try " + call("typed.override", [key_path(s)], c, l)
               + then(f"return try implemented({quoted(s)}, in: typed)"),
               prefix=next_prefix, value_type=lambda s, b: function_type(s, b, next_type(s))),
    EntryPoint("observe", void_body, lambda s, c, l:
               "let token = try " + call("delegate.observe", [quoted(s), ".after"], c, l)
               + then("token.cancel()", f"return try declared({quoted(s)})")),
    EntryPoint("@Slot", c_body, lambda s, c, l:
               f"slots.{s.name} = {c}" + then(f"return try implemented({quoted(s)}, in: slots.dynamicDelegate)"),
               sendable=False),
    EntryPoint("BlockDelegate.implement", c_body, lambda s, c, l:
               "try " + call("slots.implement", [quoted(s)], c, l)
               + then(f"return try implemented({quoted(s)}, in: slots.dynamicDelegate)"),
               prefix=lambda s: (("owner: SpellingSlots",), ("_: SpellingSlots",)),
               value_type=lambda s, b: function_type(s, b, "SpellingSlots"), sendable=False,
               literal_type="refusing"),
    EntryPoint("withCCallback", element_body, lambda s, c, l:
               "return try await refusedCallbackSignature { start in"
               + then(f"    _ = try await withCCallback(start, receive: {c})", "}"),
               value_type=throwing, expected=void_c),
    EntryPoint("CClosure.makeStream", element_body, lambda s, c, l:
               "let (_, closure) = try " + call("CClosure.makeStream", [], c, l) + then("return closure.signature"),
               expected=void_c),
    EntryPoint("NotifiedCallback.makeStream", element_body, lambda s, c, l:
               "let (_, notified) = try " + call("NotifiedCallback.makeStream", [], c, l)
               + then("defer { notified.release() }", "return notified.signature"),
               expected=void_c),
    EntryPoint("calls(of:)", element_body, lambda s, c, l:
               "_ = try " + call("delegate.calls", [f"of: {quoted(s)}"], c, l) + then(f"return try declared({quoted(s)})")),
]


# What the compiler may say of `return nil` in a closure whose result type nothing gives (the Closures
# article, "Writing the closure"): where an entry point has other overloads, the type checker reports the
# last it tried ("... closure result type 'Void'"); where the closure's one form leaves its result type
# open (BlockDelegate's `implement`), that `nil` has no type to be.
NIL_REFUSAL = ("'nil' is not compatible with closure result type", "'nil' requires a contextual type")


class Outcome:
    """What a case does: `refused` is the compiler's message when it must not compile (the README's rule);
    otherwise it compiles and gets the C signature `expected` (`refusing`: the entry point throws a
    signature mismatch whose closure signature is `expected`); `newer` when only Swift 6.3 and later
    compile it (a key path literal's member gives the types)."""
    def __init__(self, expected=None, refused=None, refusing=False, newer=False):
        self.expected, self.refused, self.refusing, self.newer = expected, refused, refusing, newer


def outcome(entry, shape, spelling, body):
    expected = entry.expected(shape)
    if spelling != LITERAL_ONLY or entry.literal_type == "context":
        return Outcome(expected)
    if entry.literal_type == "member":
        return Outcome(expected, newer=True)
    default = LITERAL_DEFAULTS.get(body.literal)
    if default is None:
        return Outcome(refused=NIL_REFUSAL)
    if default == body.result or (default, body.result) == ("Int", "Int64"):  # Int is int64_t, C's long
        return Outcome(expected)
    c_result = {"Int": "long", "Double": "double"}[default]
    return Outcome(c_result + " " + expected[expected.index("("):], refusing=entry.literal_type == "refusing")


def cases():
    """Every (entry point, shape, spelling, code, outcome) of the matrix."""
    for entry in ENTRY_POINTS:
        for shape in entry.shapes:
            body = entry.body(shape)
            prefix = entry.prefix(shape)
            for spelling, write in SPELLINGS:
                if write is None:
                    attribute = "@Sendable " if entry.sendable else ""
                    names = [p.split(":")[0] for p in prefix[0]] + [n for n, _ in shape.params]
                    rest = body.statement[0] if body.statement else f"return {body.value}"
                    literal = "{ " + (", ".join(names) + " in " if names else "") + f"probe.note(); {rest}" + " }"
                    code = f"let body: {attribute}{entry.value_type(shape, body)} = {literal}\n" + entry.hand(shape, "body", False)
                else:
                    literal = write(shape, body, prefix)
                    if literal is None:
                        continue
                    code = entry.hand(shape, literal, True)
                result = outcome(entry, shape, spelling, body)
                if result.expected not in (None, entry.expected(shape)):
                    # Another signature than the shape's has no entry of the shape's own.
                    code = code.replace(f", {own_entry(shape)})", ", nil)")
                if result.refusing:
                    code = "return try await mismatchedSignature {\n" + indent(code, 4) + "\n}"
                yield entry, shape, spelling, code, result


PRELUDE = '''
/// What the closures of the spelling matrix read and call: each returns a value of one C type, so that a
/// closure's result type is the one its C shape says wherever Swift infers it from the body.
final class SpellingProbe: Sendable {
    let calls = Atomic<Int>(0)
    let notes = Atomic<Int>(0)
    var stopped: Bool { calls.load(ordering: .relaxed) < 0 }
    var int32: Int32 { 1 }
    var int64: Int64 { 2 }
    var long: Int { 3 }
    var factor: Double { 1.5 }
    var pointer: UnsafeMutableRawPointer? { nil }
    func note() { notes.add(1, ordering: .relaxed) }
    func compare(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer?) -> Int32 { a == b ? 0 : 1 }
    func free(_ p: UnsafeMutableRawPointer?) { _ = p }
    func count(_ p: UnsafeMutableRawPointer?) -> Int32 { p == nil ? 0 : 1 }
    func pass(_ p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? { p }
    func retry(_ p: UnsafeMutableRawPointer?, _ count: Int32) -> Int32 { count }
    func visit(_ element: UnsafeMutableRawPointer?, _ data: UnsafeMutableRawPointer?) { _ = (element, data) }
    func tick() { note() }
    func close(_ handle: OpaquePointer?) -> Int32 { handle == nil ? 0 : 1 }
    func log(_ format: UnsafePointer<CChar>?, _ arguments: CVariadicArguments) { _ = (format, arguments) }
    func total(_ count: Int32, _ arguments: CVariadicArguments) -> Int { _ = arguments; return Int(count) }
    func see(_ values: Any?...) { _ = values }
    func element(_ values: Any?...) -> Int { values.count }
    /// `value`, or a `CallbackExit` thrown: what a closure that may leave its call does.
    func leave<T>(_ value: T) throws -> T {
        if calls.load(ordering: .relaxed) < -1 { throw CallbackExit.jump(to: JumpTarget()) }
        return value
    }
}

/// The shapes as a C table: a struct of `@convention(c)` members, for the key-path entry points.
struct SpellingTable {
%TABLE%
}

/// The same table for the by-name entry points.
let spellingDescriptor = ProtocolDescriptor(name: "spelling_table", methods: [
%DESCRIPTOR%
])

/// The shapes as `@Slot` properties.
final class SpellingSlots: BlockDelegate {
%SLOTS%
    init() throws { try super.init(protocol: spellingDescriptor) }
}

/// Why a case of the spelling matrix failed, when it compiled.
struct SpellingMismatch: Error, CustomStringConvertible {
    let description: String
}

/// The common shapes' own register entries (`CallbackShapes`).
enum OwnEntry {
    case comparator, destroy, context, threadStart, busy, foreach

    var address: UnsafeRawPointer {
        let entry: RegisterEntry
        switch self {
        case .comparator: entry = CallbackShapes.comparator
        case .destroy: entry = CallbackShapes.destroy
        case .context: entry = CallbackShapes.context
        case .threadStart: entry = CallbackShapes.threadStart
        case .busy: entry = CallbackShapes.busy
        case .foreach: entry = CallbackShapes.foreach
        }
        return unsafeBitCast(entry.integer, to: UnsafeRawPointer.self)
    }
}

/// Throws unless `closure` enters `expected`, its shape's own entry, where the register path is on (and
/// no entry of its own where it is off, or for a closure of no common shape).
func expectOwnEntry(_ closure: CClosure, _ expected: OwnEntry?) throws {
    let actual = closure.ownEntry.map { unsafeBitCast($0.integer, to: UnsafeRawPointer.self) }
    let wanted = RegisterPath.isAvailable ? expected?.address : nil
    guard actual == wanted else {
        throw SpellingMismatch(description: "`\\(closure.signature)` enters \\(actual.map { "\\($0)" } ?? "no entry of its own"), "
            + "not \\(wanted.map { "\\(expected!) at \\($0)" } ?? "no entry of its own")")
    }
}

/// ``expectOwnEntry(_:_:)`` for the closure a notified callback hands C.
func expectOwnEntry(_ notified: NotifiedCallback, _ expected: OwnEntry?) throws {
    try expectOwnEntry(Unmanaged<CClosure>.fromOpaque(notified.userData).takeUnretainedValue(), expected)
}

/// The signature of `method`, which the closure handed to `delegate` must now implement.
func implemented(_ method: String, in delegate: DynamicDelegate) throws -> CSignature {
    guard delegate.responds(to: method) else { throw SpellingMismatch(description: "'\\(method)' does not respond") }
    return try declared(method)
}

/// The signature `spellingDescriptor` gives `method`.
func declared(_ method: String) throws -> CSignature {
    guard let signature = spellingDescriptor.method(named: method)?.signature else {
        throw SpellingMismatch(description: "no method '\\(method)'")
    }
    return signature
}

/// The signature of the callback `withCCallback` hands its `start`, which refuses it: `body` is the
/// `withCCallback` call with `start` as its start.
func refusedCallbackSignature(
    _ body: ((CCallback) throws -> Void) async throws -> Void
) async throws -> CSignature {
    var signature: CSignature?
    do {
        try await body { callback in
            signature = callback.signature
            throw SpellingRefusal()
        }
    } catch is SpellingRefusal {}
    guard let signature else { throw SpellingMismatch(description: "withCCallback did not start") }
    return signature
}

struct SpellingRefusal: Error {}

/// The closure signature of the signature mismatch `body` must throw: a closure whose result type Swift
/// took from a literal (`Int` for `return 0`) handed to a method of another signature.
func mismatchedSignature(_ body: () async throws -> CSignature) async throws -> CSignature {
    do {
        let signature = try await body()
        throw SpellingMismatch(description: "`\\(signature)` was not refused")
    } catch DelegateError.signatureMismatch(_, _, _, let actual) {
        return actual
    }
}
'''


def prelude():
    descriptor = ",\n".join(
        f'    MethodDescriptor(name: "{s.name}", signature: try! CSignature(parsing: "{s.c}"))' for s in SHAPES + VARIADIC_SHAPES)
    slots = "\n".join(f'    @Slot("{s.name}") var {s.name}: (({s.types}) -> {s.result})?' for s in SHAPES)
    table = "\n".join(f"    var {s.name}: (@convention(c) ({s.types}) -> {s.result})?" for s in SHAPES)
    return PRELUDE.replace("%DESCRIPTOR%", descriptor).replace("%SLOTS%", slots).replace("%TABLE%", table)


# What a case's code may use besides the prelude, made anew for each case by the test that runs it.
PARAMETERS = "probe: SpellingProbe, delegate: DynamicDelegate, typed: TypedDelegate<SpellingTable>, slots: SpellingSlots"

IMPORTS = "@testable import DelegateKit\nimport Synchronization\n"


def indent(text, spaces):
    return "\n".join((" " * spaces + line) if line else line for line in text.split("\n"))


def case_function(index, code):
    return f"func spellingCase{index}({PARAMETERS}) async throws -> CSignature {{\n{indent(code, 4)}\n}}\n"


def swift_string(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def write():
    OUT.mkdir(parents=True, exist_ok=True)
    header = "// Generated by Scripts/spelling-matrix.py: do not edit; change the script and run it again.\n\n" + IMPORTS
    (OUT / "SpellingMatrixPrelude.generated.swift").write_text(header + prelude())
    by_entry = {}
    for entry, shape, spelling, code, result in cases():
        by_entry.setdefault(entry.name, []).append((entry, shape, spelling, code, result))
    written = {"SpellingMatrixPrelude.generated.swift"}
    total = refused = 0
    for number, (name, items) in enumerate(by_entry.items()):
        functions, rows, newer_functions, newer_rows = [], [], [], []
        for index, (entry, shape, spelling, code, result) in enumerate(items):
            total += 1
            if result.refused:  # does not compile: `--typecheck` checks the compiler's message
                refused += 1
                continue
            function = f"spelling{number}_{index}"
            (newer_functions if result.newer else functions).append(
                f"    static func {function}({PARAMETERS}) async throws -> CSignature {{\n{indent(code, 8)}\n    }}\n")
            (newer_rows if result.newer else rows).append(
                f'        SpellingCase(entryPoint: "{swift_string(name)}", shape: "{shape.c}", spelling: "{spelling}",\n'
                f'                     expected: "{result.expected}", run: {function}),')
        file_name = f"SpellingMatrix{number:02d}.generated.swift"
        written.add(file_name)
        text = header + f"\n/// The spelling matrix's cases for {name}.\nenum SpellingMatrix{number:02d} {{\n"
        if newer_rows:
            text += "    static let cases: [SpellingCase] = [\n" + "\n".join(rows) + "\n    ] + newerCompilerCases\n\n"
            text += "\n".join(functions)
            # A key path literal's member gives a closure its types with Swift 6.3 and later only.
            text += ("\n    #if compiler(>=6.3)\n    static let newerCompilerCases: [SpellingCase] = [\n"
                     + "\n".join(newer_rows) + "\n    ]\n\n" + "\n".join(newer_functions)
                     + "    #else\n    static let newerCompilerCases: [SpellingCase] = []\n    #endif\n")
        else:
            text += "    static let cases: [SpellingCase] = [\n" + "\n".join(rows) + "\n    ]\n\n" + "\n".join(functions)
        (OUT / file_name).write_text(text + "}\n")
    cases_list = " + ".join(f"SpellingMatrix{n:02d}.cases" for n in range(len(by_entry)))
    (OUT / "SpellingMatrixCases.generated.swift").write_text(
        header + f"\n/// Every case of the spelling matrix that compiles.\nlet spellingMatrix: [SpellingCase] = {cases_list}\n")
    written.add("SpellingMatrixCases.generated.swift")
    for stale in OUT.glob("*.generated.swift"):
        if stale.name not in written:
            stale.unlink()
    print(f"{total} cases in {len(by_entry)} entry points, {refused} of them refused by the compiler as the documentation says")
    shapes = {shape.name for entry in ENTRY_POINTS for shape in entry.shapes}
    check_claims(total, len(SPELLINGS), len(shapes), len(by_entry))


# How the documentation states the matrix's size; each statement must give what this script makes.
CLAIM = re.compile(r"each of the ([\d,]+) combinations on its own \(`Scripts/spelling-matrix\.py`: (\d+) spellings, "
                   r"(\d+) C shapes, (\d+) entry points\)")


def check_claims(total, spellings, shapes, entries):
    """Fails unless the README or the DocC catalog states the matrix's size, and every statement of it is
    what was just made."""
    documents = [ROOT / "README.md", *sorted((ROOT / "Sources" / "DelegateKit" / "DelegateKit.docc").glob("*.md"))]
    made = (f"{total:,}", str(spellings), str(shapes), str(entries))
    found = 0
    for document in documents:
        for claim in CLAIM.finditer(" ".join(document.read_text().split())):
            found += 1
            if claim.groups() != made:
                sys.exit(f"error: {document.relative_to(ROOT)} says {claim.group(0)!r}, but the matrix has {made[0]} "
                         f"combinations: {spellings} spellings, {shapes} C shapes, {entries} entry points")
    if not found:
        sys.exit("error: neither the README nor the DocC catalog states the spelling matrix's size "
                 "(\"each of the N combinations on its own (`Scripts/spelling-matrix.py`: …)\")")


def typecheck(jobs):
    bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    modules = pathlib.Path(bin_path) / "Modules"
    if not (modules / "DelegateKit.swiftmodule").exists():
        sys.exit(f"error: no DelegateKit module in {modules}: run `swift build --target DelegateKit` first")
    flags = ["-typecheck", "-swift-version", "6", "-I", str(modules)]
    # DelegateKit's module refers to its C modules, whose module maps SwiftPM wrote beside their objects.
    for c_module, folder in (("CDelegateKitLibffi", "Libffi"), ("CDelegateKitExits", "Exits"),
                             ("CDelegateKitRetirement", "Retirement"), ("CDelegateKitTrampolines", "Trampolines")):
        flags += ["-Xcc", f"-fmodule-map-file={pathlib.Path(bin_path) / f'{c_module}.build/module.modulemap'}",
                  "-Xcc", f"-I{ROOT / 'CFFIShim' / folder / 'include'}"]
    all_cases = list(cases())
    with tempfile.TemporaryDirectory(prefix="spelling-matrix-") as directory:
        directory = pathlib.Path(directory)
        (directory / "prelude.swift").write_text(IMPORTS + prelude())

        def check(item):
            index, (entry, shape, spelling, code, result) = item
            path = directory / f"case{index}.swift"
            path.write_text(IMPORTS + case_function(index, code))
            compiled = subprocess.run(["swiftc"] + flags + [str(directory / "prelude.swift"), str(path)],
                                      capture_output=True, text=True)
            return item, compiled

        failures = []
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for (index, (entry, shape, spelling, code, result)), compiled in pool.map(check, enumerate(all_cases)):
                errors = [line.split(": error: ", 1)[1] for line in compiled.stderr.splitlines() if ": error: " in line]
                where = f"- {entry.name}, `{shape.c}`, {spelling}:\n{indent(code, 6)}\n"
                if result.refused:
                    if compiled.returncode == 0 or not any(message in e for e in errors for message in result.refused):
                        failures.append(where + f"      should not compile, the compiler saying \"{' or '.join(result.refused)}\"; it "
                                        + ("compiled" if compiled.returncode == 0 else "said:\n" + "\n".join("      " + e for e in errors[:3])))
                elif compiled.returncode != 0:
                    failures.append(where + "\n".join("      " + e for e in errors[:3]))
    refused = sum(1 for *_, result in all_cases if result.refused)
    print(f"{len(all_cases) - len(failures)} of {len(all_cases)} cases type-check as they should "
          f"({refused} must not compile: a closure returning only `nil` that states no result type)")
    if failures:
        print("\n".join(failures))
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--typecheck", action="store_true")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    arguments = parser.parse_args()
    if arguments.typecheck:
        typecheck(arguments.jobs)
    else:
        write()


if __name__ == "__main__":
    main()
