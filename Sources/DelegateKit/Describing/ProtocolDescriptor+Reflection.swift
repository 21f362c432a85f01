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
        let offset = try storedOffset(member)
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

extension ReflectedTable {
    /// The method a key path literal into `Table` names when Swift passed it as a function (SE-0249), as
    /// the key-path `implement` forms that take the member's type from it receive it; after checking, as
    /// ``method(_:closureType:)`` does, that the closure's Swift function type is the member's.
    ///
    /// A function cannot say which member it reads, so it is asked: `readsNonNull` is handed a table whose
    /// methods are all NULL but one, for each method in turn, and says whether the member it reads is
    /// not NULL. (The member's value is only compared with `nil`, never called.) Throws
    /// ``DelegateError/invalidMember(_:protocol:reason:)`` when it reads none of them.
    static func method<Table>(reading readsNonNull: (Table) -> Bool, closureType: String) throws -> MethodDescriptor {
        let table = of(Table.self)
        let descriptor = table.descriptor
        try descriptor.validate()
        let size = max(MemoryLayout<Table>.stride, 1)
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<Table>.alignment)
        defer { bytes.deallocate() }
        for method in descriptor.methods {
            bytes.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            (bytes + method.offset).storeBytes(of: readMarker, as: UnsafeRawPointer.self)
            guard readsNonNull(bytes.load(as: Table.self)) else { continue }
            if let expected = table.functionTypes[method.offset], expected != closureType {
                throw DelegateError.typeMismatch(member: method.name, protocol: descriptor.name, expected: expected, actual: closureType)
            }
            return method
        }
        throw DelegateError.invalidMember(
            "a function of \(closureType)", protocol: descriptor.name,
            reason: "it reads none of the struct's function-pointer members; pass a key path literal such as `\\.member`")
    }

    /// A non-NULL code address to put in a probed member: the value a read returns is never called.
    private static var readMarker: UnsafeRawPointer { unsafeBitCast(markedFunction, to: UnsafeRawPointer.self) }
}

/// The function whose address marks a member being probed (`ReflectedTable.method(reading:closureType:)`).
private let markedFunction: @convention(c) () -> Void = {}

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

extension ReflectedTable {
    /// The offset of the member `member` names, for writing it as data; throws
    /// ``DelegateError/notAField(_:protocol:signature:)`` for a function-pointer member, which takes a
    /// closure (a slot's value is written only as its slot changes), and
    /// ``DelegateError/invalidMember(_:protocol:reason:)`` for a key path to no stored member.
    static func dataOffset<Table, Value>(_ member: KeyPath<Table, Value>) throws -> Int {
        let descriptor = of(Table.self).descriptor
        try descriptor.validate()
        let offset = try storedOffset(member)
        if let method = descriptor.methods.first(where: { $0.offset == offset }) {
            throw DelegateError.notAField(method.name, protocol: descriptor.name, signature: method.signature)
        }
        return offset
    }

    /// The offset of the stored member `member` names; throws
    /// ``DelegateError/invalidMember(_:protocol:reason:)`` for a key path to a computed property or
    /// through one.
    static func storedOffset<Table, Value>(_ member: KeyPath<Table, Value>) throws -> Int {
        guard let offset = MemoryLayout<Table>.offset(of: member) else {
            throw DelegateError.invalidMember("\(member)", protocol: of(Table.self).descriptor.name, reason: "it is not a stored member of the struct")
        }
        return offset
    }
}
