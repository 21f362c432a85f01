/// Everything DelegateKit can detect going wrong, each with a message that names what was asked for.
public enum DelegateError: Error, Hashable, Sendable {
    /// A closure's C signature differs from the method's. Carries the method, the protocol, the
    /// method's signature (`expected`) and the closure's (`actual`).
    case signatureMismatch(method: String, protocol: String, expected: CSignature, actual: CSignature)
    /// A closure given for a member of an imported struct (through a key path) does not have the
    /// member's Swift function type. Carries both types as the Swift runtime spells them.
    case typeMismatch(member: String, protocol: String, expected: String, actual: String)
    /// The protocol has no method of that name. `suggestions` are its method names nearest to it (a
    /// typo or a difference in case), at most three, nearest first; empty when none is near.
    case unknownMethod(String, protocol: String, suggestions: [String] = [])
    /// The protocol has no data member of that name. `suggestions` are its data member names nearest to it.
    case unknownField(String, protocol: String, suggestions: [String] = [])
    /// A value written to a data member has another C type than the member.
    case fieldTypeMismatch(field: String, protocol: String, expected: CType, actual: CType)
    /// Two members of a protocol share a name.
    case duplicateMember(String, protocol: String)
    /// A protocol member that cannot be laid out, with the reason.
    case invalidMember(String, protocol: String, reason: String)
    /// Methods marked required have no implementation (reported by `validate()`).
    case missingRequiredMethods([String], protocol: String)
    /// A ``CValue``'s stated C type does not have its Swift size or alignment.
    case layoutMismatch(type: String, cType: CType, swiftSize: Int, swiftAlignment: Int)
    /// A ``CValue`` holds references, so its bytes cannot be copied to and from C.
    case notTrivial(type: String)
    /// A signature libffi cannot serve, with the reason.
    case invalidSignature(CSignature, reason: String)
    /// C text that does not parse: what was expected, and where (1-based line and column).
    case syntax(message: String, text: String, line: Int, column: Int)
    /// A forwarding chain that would come back to a table already in it, listed in order.
    case forwardingLoop([String])
    /// The system refused executable memory for a closure (for example under a W^X policy).
    case closureAllocationFailed(CSignature)
    /// A method operation (`implement`, `override`, `observe`) named a data member; carries its C type.
    case notAMethod(String, protocol: String, type: CType)
    /// A data member operation (`setField`, `field`) named a method; carries the method's C signature.
    case notAField(String, protocol: String, signature: CSignature)
    /// A function pointer was asked for as a Swift type that does not fit its C signature.
    /// Carries the call (`CClosure.functionPointer(as:)`), the closure's or the method's signature, the
    /// requested type as the Swift runtime spells it, and what does not fit.
    case functionTypeMismatch(call: String, signature: CSignature, requested: String, reason: String)
    /// A value given as a C function pointer has no C address: it is neither a ``CClosure``, a
    /// ``CFunction`` nor a `@convention(c)` function. Carries the call and the value's type as the Swift
    /// runtime spells it.
    case notAFunctionPointer(call: String, type: String)
    /// A `@Slot` of a ``BlockDelegate`` does not fit its table. Carries the property
    /// (`CookieStream.onRead`), how the slot names its method (`"read"`, `\fx_plugin.transform`) and
    /// the error about the method itself (``signatureMismatch(method:protocol:expected:actual:)``,
    /// ``typeMismatch(member:protocol:expected:actual:)``, ``unknownMethod(_:protocol:suggestions:)``, …).
    indirect case slotMismatch(property: String, slot: String, error: DelegateError)
    /// `dlopen` could not open a library. Carries the path and what `dlerror()` said.
    case libraryNotFound(path: String, reason: String)
    /// `dlsym` found no symbol of that name. Carries the symbol, the library's path (or "the process")
    /// and what `dlerror()` said.
    case symbolNotFound(String, library: String, reason: String)
    /// A ``CFunction`` was called with arguments or a result type that do not fit its C signature.
    /// Carries the function's name, its declaration (`int32_t (void *, uint64_t, void *, ...)`), the
    /// signature of the call as written (its Swift types' C types) and what does not fit.
    case callMismatch(function: String, declaration: String, call: CSignature, reason: String)
    /// A run-time value given to ``CFunction/call(_:variadicTypes:)`` that its C type cannot hold.
    /// Carries the function's name, the argument's position (from 1), its C type and the value as C's
    /// printf would show it (``CDynamicValue/description``; the value itself is the caller's own).
    case valueMismatch(function: String, argument: Int, type: CType, value: String)
    /// A variadic argument of a C type C never passes through `...`: default argument promotions turn a
    /// `float` into a `double` and a narrower integer into an `int`. Carries the function's name, the
    /// argument's position (from 1), the type and what C passes instead.
    case variadicArgument(function: String, argument: Int, type: CType, reason: String)
    /// ``DynamicDelegate/waitForRemovedCalls(timeout:)`` was called from inside a call it would wait for
    /// (a closure waiting for its own removal to finish), which could never end. Carries the method and
    /// the protocol of that call.
    case waitingForOwnCall(method: String, protocol: String)
    /// ``CFunction/call(catchingJumpsTo:_:returning:)->JumpOutcome<R>`` was given a ``JumpTarget`` that another call
    /// catching jumps still uses; a jump would reach only one of them. Carries the function's name.
    case jumpTargetInUse(function: String)
    /// `append` of an ``EntryArray`` or a ``TypedEntryArray`` found every row of the array's capacity
    /// taken: its memory never moves while C may hold it, so it cannot grow. Carries the array's type and
    /// capacity.
    case entryArrayFull(type: String, capacity: Int)
    /// ``EntryArray/update(row:_:)`` or ``TypedEntryArray/update(row:_:)`` was given the index of no row.
    /// Carries the array's type, the index and the number of rows.
    case entryArrayIndex(type: String, index: Int, count: Int)
}

extension DelegateError: CustomStringConvertible {
    /// A sentence naming the method, protocol, types or text position involved.
    public var description: String {
        switch self {
        case let .signatureMismatch(method, proto, expected, actual):
            return "method '\(method)' of \(proto) has C signature `\(expected)`, "
                + "but the closure has C signature `\(actual)`"
        case let .typeMismatch(member, proto, expected, actual):
            return "member '\(member)' of \(proto) has type `\(expected)`, but the closure has type `\(actual)`"
        case let .unknownMethod(name, proto, suggestions):
            return "\(proto) has no method named '\(name)'" + NearestNames.phrase(suggestions)
        case let .unknownField(name, proto, suggestions):
            return "\(proto) has no data member named '\(name)'" + NearestNames.phrase(suggestions)
        case let .fieldTypeMismatch(field, proto, expected, actual):
            return "data member '\(field)' of \(proto) has C type `\(expected)`, but the value has C type `\(actual)`"
        case let .duplicateMember(name, proto):
            return "\(proto) declares more than one member named '\(name)'"
        case let .invalidMember(name, proto, reason):
            return "member '\(name)' of \(proto) cannot be used: \(reason)"
        case let .missingRequiredMethods(names, proto):
            let list = names.map { "'\($0)'" }.joined(separator: ", ")
            return "\(proto) requires \(names.count == 1 ? "method" : "methods") \(list), "
                + "which \(names.count == 1 ? "has" : "have") no implementation"
        case let .layoutMismatch(type, cType, size, alignment):
            return "\(type) states C type `\(cType)` (size \(cType.size), alignment \(cType.alignment)), "
                + "but its Swift layout has size \(size), alignment \(alignment)"
        case let .notTrivial(type):
            return "\(type) holds references or other non-trivial values, so it cannot travel through C by value"
        case let .invalidSignature(signature, reason):
            return "C signature `\(signature)` cannot be used: \(reason)"
        case let .syntax(message, text, line, column):
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            // Any line number may be given to this case; only one inside the text has a source line.
            let source = (1...max(lines.count, 1)).contains(line) && line - 1 < lines.count ? String(lines[line - 1]) : ""
            let caret = String(repeating: " ", count: max(0, column - 1)) + "^"
            return "C syntax error at line \(line), column \(column): \(message)\n    \(source)\n    \(caret)"
        case let .forwardingLoop(chain):
            return "forwarding would loop: " + chain.joined(separator: " -> ")
        case let .closureAllocationFailed(signature):
            return "libffi could not allocate an executable closure for `\(signature)` "
                + "(the system may forbid writable and executable memory)"
        case let .notAMethod(name, proto, type):
            return "member '\(name)' of \(proto) is a data member of C type `\(type)`, not a method: "
                + "write it with setField(_:_:)"
        case let .notAField(name, proto, signature):
            return "member '\(name)' of \(proto) is a method with C signature `\(signature)`, not a data member: "
                + "give it a closure with implement(_:_:)"
        case let .functionTypeMismatch(call, signature, requested, reason):
            return "\(call): `\(requested)` does not fit the C signature `\(signature)`: \(reason)"
        case let .notAFunctionPointer(call, type):
            return "\(call): a `\(type)` is not a C function pointer; pass a CClosure (make one from a Swift closure), "
                + "a CFunction or a @convention(c) function"
        case let .slotMismatch(property, slot, error):
            return "\(property) (@Slot(\(slot))): \(error)"
        case let .libraryNotFound(path, reason):
            return "cannot open library '\(path)': \(reason)"
        case let .symbolNotFound(symbol, library, reason):
            return "no symbol '\(symbol)' in \(library): \(reason)"
        case let .callMismatch(function, declaration, call, reason):
            return "\(function) has C signature `\(declaration)`, but the call has C signature `\(call)`: \(reason)"
        case let .valueMismatch(function, argument, type, value):
            return "argument \(argument) of \(function) has C type `\(type)`, which cannot hold the value \(value)"
        case let .variadicArgument(function, argument, type, reason):
            return "argument \(argument) of \(function) is variadic, and C never passes `\(type)` through `...`: \(reason)"
        case let .jumpTargetInUse(function):
            return "\(function) cannot be called catching jumps to a JumpTarget that another call still uses: "
                + "give each call in progress a target of its own"
        case let .entryArrayFull(type, capacity):
            return "\(type) is full: all \(capacity) rows are taken, and its memory cannot move while C may hold it; "
                + "make the array with the capacity it needs"
        case let .entryArrayIndex(type, index, count):
            return "\(type) has no row \(index): it has \(count) row\(count == 1 ? "" : "s")"
        case let .waitingForOwnCall(method, proto):
            return "waitForRemovedCalls(timeout:) was called inside a call of method '\(method)' of \(proto) that it "
                + "would wait for, which could never end: wait outside the removed closure, or do not wait"
        }
    }
}
