/// Reads the C meaning of the fully qualified type names the Swift runtime prints
/// (`Swift.Optional<@convention(c) (Swift.Int32) -> ()>`). Only imported C types appear in them, so a
/// small, closed set of spellings covers everything a C struct member can be.
@usableFromInline
enum SwiftTypeName {
    /// The Swift function type of a closure with these parameter and result types, spelled as the
    /// runtime spells a `@convention(c)` member of that type. A result C cannot receive (`Never`, a
    /// discarded value) makes a function returning `void` (see `ResultCheck`), so it reads `()`.
    @usableFromInline
    static func functionType<each A, R>(_ parameters: repeat (each A).Type, returning result: R.Type) -> String {
        var names: [String] = []
        for parameter in repeat each parameters { names.append(String(reflecting: parameter)) }
        let resultName = ResultCheck.cValue(result) != nil ? String(reflecting: result) : "()"
        return "@convention(c) (\(names.joined(separator: ", "))) -> \(resultName)"
    }

    /// `@convention(c) (…) -> …` when `name` is a C function pointer, optional or not; otherwise nil.
    static func functionType(_ name: String) -> String? {
        var name = Substring(name)
        if name.hasPrefix("Swift.Optional<"), name.hasSuffix(">") {
            name = name.dropFirst("Swift.Optional<".count).dropLast()
        }
        return name.hasPrefix("@convention(c) (") ? String(name) : nil
    }

    /// The C signature of a `@convention(c)` function type name.
    static func signature(ofFunctionType name: String) throws -> CSignature {
        let (parameters, result) = parts(ofFunctionType: name)
        let returnType = try cType(result, allowVoid: true) ?? byValueType(result, role: "returns")
        let parameterTypes = try parameters.map { parameter in
            try cType(parameter, allowVoid: false) ?? byValueType(parameter, role: "takes")
        }
        return CSignature(returnType, parameterTypes)
    }

    /// The parameter type names and the result type name of a `@convention(c) (…) -> …` name.
    static func parts(ofFunctionType name: String) -> (parameters: [String], result: String) {
        let body = name.dropFirst("@convention(c) ".count)
        // The parameter list is the parenthesized group at the start (parentheses nest only in pairs,
        // unlike `>`, which also ends every `->`); the result follows " -> ".
        var depth = 0
        var end = body.startIndex
        for index in body.indices {
            if body[index] == "(" { depth += 1 }
            if body[index] == ")" { depth -= 1 }
            if depth == 0 { end = index; break }
        }
        guard end > body.startIndex else { return ([], String(body)) }
        let parameters = splitTopLevel(body[body.index(after: body.startIndex)..<end])
        let result = body[body.index(after: end)...].drop { $0 == " " || $0 == "-" || $0 == ">" }
        return (parameters, String(result))
    }

    /// Why a function type has no C signature DelegateKit can know; the text follows "its type `…` ".
    struct Unrepresentable: Error {
        let reason: String
    }

    /// The C type of a struct a function type passes (`role` "takes") or returns by value, from the
    /// struct's ``CValue`` conformance. The runtime prints an imported C struct as `__C.name`; its
    /// metadata is found by its mangled name (`So<length><name>V`), which `_typeByName` accepts where
    /// it rejects the printed one. A type that cannot be found has no conformance either: one in the
    /// program would keep its metadata there.
    static func byValueType(_ name: String, role: String) throws -> CType {
        let imported = name.hasPrefix("__C.") ? String(name.dropFirst(4)) : nil
        guard let imported, !imported.isEmpty, imported.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
            throw Unrepresentable(reason: "\(role) `\(name)` by value, which has no C type DelegateKit knows")
        }
        guard let value = _typeByName("So\(imported.utf8.count)\(imported)V") as? any CValue.Type else {
            throw Unrepresentable(
                reason: "\(role) the struct \(imported) by value, and \(imported) does not conform to CValue; "
                    + "state its C layout (`extension \(imported): CValue { static var cType: CType { .structure([…]) } }`) "
                    + "to implement it")
        }
        do {
            return try value.checkedCType()
        } catch {
            throw Unrepresentable(reason: "\(role) the struct \(imported) by value, whose CValue conformance is wrong: \(error)")
        }
    }

    /// Whether `name` is a Swift function type (optional or not) other than a C function pointer:
    /// `(Swift.Int32) -> Swift.Int32`, `@Sendable (…) throws -> …`, `@convention(block) …`. A tuple (how
    /// Swift imports a C array) also starts with `(`, but no arrow follows its parentheses.
    static func isSwiftClosure(_ name: String) -> Bool {
        var rest = Substring(name)
        if rest.hasPrefix("Swift.Optional<"), rest.hasSuffix(">") {
            rest = rest.dropFirst("Swift.Optional<".count).dropLast()
        }
        if rest.hasPrefix("@convention(c) ") { return false }
        while rest.hasPrefix("@") {  // @Sendable, @escaping, @convention(swift|block|thin)
            guard let space = rest.firstIndex(of: " ") else { return false }
            rest = rest[rest.index(after: space)...]
        }
        guard rest.hasPrefix("(") else { return false }
        var depth = 0
        for index in rest.indices {
            if rest[index] == "(" { depth += 1 }
            if rest[index] == ")" { depth -= 1 }
            if depth == 0 {
                let after = rest[rest.index(after: index)...].drop { $0 == " " }
                return after.hasPrefix("->") || after.hasPrefix("throws") || after.hasPrefix("async")
            }
        }
        return false
    }

    /// The C type a value of the named Swift type is, when the name alone says (scalars and pointers).
    static func cType(_ name: String, allowVoid: Bool) -> CType? {
        switch name {
        case "()": return allowVoid ? .void : nil
        case "Swift.Bool": return .bool
        case "Swift.Int8": return .int8
        case "Swift.UInt8": return .uint8
        case "Swift.Int16": return .int16
        case "Swift.UInt16": return .uint16
        case "Swift.Int32": return .int32
        case "Swift.UInt32": return .uint32
        case "Swift.Int64": return .int64
        case "Swift.UInt64": return .uint64
        case "Swift.Int": return Int.cType
        case "Swift.UInt": return UInt.cType
        case "Swift.Float": return .float
        case "Swift.Double": return .double
        #if arch(x86_64)
        case "Swift.Float80": return .longDouble
        #endif
        case "Swift.OpaquePointer", "Swift.UnsafeRawPointer", "Swift.UnsafeMutableRawPointer": return .pointer
        default:
            let pointerPrefixes = ["Swift.Optional<", "Swift.UnsafePointer<", "Swift.UnsafeMutablePointer<", "@convention(c) "]
            // Optional only ever wraps a pointer in an imported C type: C has no other optional values.
            return pointerPrefixes.contains(where: name.hasPrefix) ? .pointer : nil
        }
    }

    /// The comma-separated items of a list, ignoring commas nested in `<>` or `()`.
    private static func splitTopLevel(_ list: Substring) -> [String] {
        var items: [String] = []
        var current = ""
        var depth = 0
        for character in list {
            if character == "<" || character == "(" { depth += 1 }
            if character == ")" || (character == ">" && current.last != "-") { depth -= 1 }
            if character == "," && depth == 0 {
                items.append(current.trimmingSpaces())
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.trimmingSpaces().isEmpty { items.append(current.trimmingSpaces()) }
        return items
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
