import Synchronization

extension ProtocolDescriptor {
    /// The layout of a C struct that Swift imports, read from Swift's own view of it: each stored
    /// property in order, a function-pointer property as a method whose C signature comes from its
    /// Swift type, any other property as a data member.
    ///
    /// ```swift
    /// let io = ProtocolDescriptor(for: sqlite3_io_methods.self)   // 1 field, 18 methods, 152 bytes
    /// ```
    ///
    /// A struct passed or returned by value takes its C type from its ``CValue`` conformance, found at
    /// run time (`extension fx_point: CValue { … }` anywhere in the program); a function-pointer member
    /// with such a struct that does not conform stays opaque data, and implementing it says which type
    /// must conform. A Swift closure member (not `@convention(c)`), or members that do not add up to the
    /// struct's size (bit-fields), make ``validate()`` and every lookup throw
    /// ``DelegateError/invalidMember(_:protocol:reason:)`` naming the member.
    ///
    /// `Table` must be a C struct imported by Swift (or a Swift struct of trivial members laid out the
    /// same way); the result is computed once per type.
    public init<Table>(for table: Table.Type) {
        self = ReflectedTable.of(table).descriptor
    }
}

/// What DelegateKit learned about an imported struct type: its descriptor and, per method offset, the
/// member's exact Swift type, which is what a closure given through a key path is checked against.
struct ReflectedTable: Sendable {
    let descriptor: ProtocolDescriptor
    /// The Swift function type of each method (without `Optional`), by offset.
    let functionTypes: [Int: String]

    private static let cache = Locked<[ObjectIdentifier: ReflectedTable]>([:])

    static func of<Table>(_ table: Table.Type) -> ReflectedTable {
        if let known = cache.withLock({ $0[ObjectIdentifier(table)] }) { return known }
        let reflected = reflect(table)
        cache.withLock { $0[ObjectIdentifier(table)] = reflected }
        return reflected
    }

    private static func reflect<Table>(_ table: Table.Type) -> ReflectedTable {
        let name = String(describing: table)
        // Mirror needs an instance; all-zero bytes are a valid value of every C struct (NULL pointers).
        let bytes = UnsafeMutableRawPointer.allocate(
            byteCount: max(MemoryLayout<Table>.stride, 1), alignment: MemoryLayout<Table>.alignment)
        defer { bytes.deallocate() }
        bytes.initializeMemory(as: UInt8.self, repeating: 0, count: max(MemoryLayout<Table>.stride, 1))
        let instance = bytes.load(as: Table.self)

        var members: [ProtocolDescriptor.Member] = []
        var functions: [(member: String, type: String)] = []
        var refusedReasons: [String: String] = [:]
        var swiftClosure: DelegateError?
        for (index, child) in Mirror(reflecting: instance).children.enumerated() {
            let label = child.label ?? "_\(index)"
            let value = SwiftValueType(of: child.value)
            let storage = CType.opaque(size: value.stride, alignment: value.alignment)
            if SwiftTypeName.isSwiftClosure(value.name) {
                // C cannot call a Swift closure, nor copy one (it holds a reference): the struct is not a
                // C table, whatever its other members. Named here, before the layout check blames the sizes.
                swiftClosure = swiftClosure ?? .invalidMember(
                    label, protocol: name,
                    reason: "its type `\(value.name)` is a Swift closure, not a C function pointer; "
                        + "declare it `@convention(c)` for C to call it")
                members.append(.field(label, storage))
                continue
            }
            guard let function = SwiftTypeName.functionType(value.name) else {
                members.append(.field(label, SwiftTypeName.cType(value.name, allowVoid: false) ?? storage))
                continue
            }
            do {
                let signature = try SwiftTypeName.signature(ofFunctionType: function)
                members.append(.method(MethodDescriptor(name: label, signature: signature)))
                functions.append((label, function))
            } catch let refusal as SwiftTypeName.Unrepresentable {
                refusedReasons[label] = "its type `\(function)` \(refusal.reason)"
                members.append(.field(label, storage))
            } catch {
                refusedReasons[label] = "its type `\(function)` cannot be described in C terms: \(error)"
                members.append(.field(label, storage))
            }
        }

        var descriptor = ProtocolDescriptor(name: name, members: members)
        descriptor.refusedMethods = refusedReasons
        if descriptor.problem == nil, let swiftClosure {
            descriptor.problem = swiftClosure
        }
        if descriptor.problem == nil,
            descriptor.size != MemoryLayout<Table>.stride || descriptor.alignment != MemoryLayout<Table>.alignment {
            descriptor.problem = .invalidMember(
                name, protocol: name,
                reason: "its members add up to size \(descriptor.size), alignment \(descriptor.alignment), but Swift "
                    + "lays it out with size \(MemoryLayout<Table>.stride), alignment \(MemoryLayout<Table>.alignment) "
                    + "(bit-fields or unions?); describe it with ProtocolDescriptor(parsing:name:) instead")
        }
        var functionTypes: [Int: String] = [:]
        for (member, type) in functions {
            if let method = descriptor.method(named: member) { functionTypes[method.offset] = type }
        }
        return ReflectedTable(descriptor: descriptor, functionTypes: functionTypes)
    }

    /// The method a key path into `Table` names, after checking that the closure's Swift function type
    /// (when given) is the member's. Throws ``DelegateError/typeMismatch(member:protocol:expected:actual:)`` or
    /// ``DelegateError/invalidMember(_:protocol:reason:)``.
    static func method<Table, Member>(
        _ member: KeyPath<Table, Member>, closureType: String?
    ) throws -> MethodDescriptor {
        let table = of(Table.self)
        let descriptor = table.descriptor
        try descriptor.validate()
        let path = "\(member)"
        guard let offset = MemoryLayout<Table>.offset(of: member) else {
            throw DelegateError.invalidMember(path, protocol: descriptor.name, reason: "it is not a stored member of the struct")
        }
        guard let method = descriptor.methods.first(where: { $0.offset == offset }),
            let expected = table.functionTypes[offset]
        else {
            let field = descriptor.fields.first { $0.offset == offset }
            let reason = field.flatMap { descriptor.refusedMethods[$0.name] }
                ?? "it is a data member, not a function pointer; set it through the typed table"
            throw DelegateError.invalidMember(field?.name ?? path, protocol: descriptor.name, reason: reason)
        }
        if let closureType, expected != closureType {
            throw DelegateError.typeMismatch(member: method.name, protocol: descriptor.name, expected: expected, actual: closureType)
        }
        return method
    }
}

/// A Swift type's name and layout, read through an opened existential.
private struct SwiftValueType {
    let name: String
    let stride: Int
    let alignment: Int

    init<T>(_ value: T) {
        name = String(reflecting: T.self)
        stride = MemoryLayout<T>.stride
        alignment = MemoryLayout<T>.alignment
    }

    /// Opened through a free function: Swift 6.3 crashes opening an `Any` into an initializer.
    init(of value: Any) {
        self = _openExistential(value, do: swiftValueType)
    }
}

private func swiftValueType<T>(_ value: T) -> SwiftValueType { SwiftValueType(value) }

/// Reads the C meaning of the fully qualified type names the Swift runtime prints
/// (`Swift.Optional<@convention(c) (Swift.Int32) -> ()>`). Only imported C types appear in them, so a
/// small, closed set of spellings covers everything a C struct member can be.
@usableFromInline
enum SwiftTypeName {
    /// The Swift function type of a closure with these parameter and result types, spelled as the
    /// runtime spells a `@convention(c)` member of that type.
    @usableFromInline
    static func functionType<each A, R>(_ parameters: repeat (each A).Type, returning result: R.Type) -> String {
        var names: [String] = []
        for parameter in repeat each parameters { names.append(String(reflecting: parameter)) }
        let resultName = R.self == Void.self ? "()" : String(reflecting: result)
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

extension CType {
    /// Storage of a given size and alignment, for a member DelegateKit only needs to step over.
    static func opaque(size: Int, alignment: Int) -> CType {
        let unit: CType = switch alignment {
        case 1: .uint8
        case 2: .uint16
        case 4: .uint32
        case 8: .uint64
        default: .longDouble
        }
        return .structure(Array(repeating: unit, count: max(size / max(unit.size, 1), 1)))
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
