/// The layout of a C callback table: a struct whose members are function pointers (methods) and
/// possibly data (fields), in declaration order, laid out by C's rules.
///
/// ```swift
/// let cookieIO = ProtocolDescriptor(name: "cookie_io_functions_t", methods: [
///     MethodDescriptor(name: "read",  signature: try CSignature(parsing: "ssize_t (void *, char *, size_t)")),
///     MethodDescriptor(name: "close", signature: try CSignature(parsing: "int (void *)"), isRequired: true),
/// ])
/// ```
///
/// Creating a descriptor never fails; a malformed one (two members with one name, a `void` field) is
/// reported by ``validate()`` and by every ``DynamicDelegate`` operation that looks a member up by name.
public struct ProtocolDescriptor: Hashable, Sendable {
    /// One member of the table, in declaration order.
    public enum Member: Hashable, Sendable {
        /// A data member with its name and C type.
        case field(String, CType)
        /// A function-pointer member.
        case method(MethodDescriptor)

        /// The member's name.
        var name: String {
            switch self {
            case .field(let name, _): return name
            case .method(let method): return method.name
            }
        }

        var type: CType {
            switch self {
            case .field(_, let type): return type
            case .method: return .pointer
            }
        }
    }

    /// The C struct's name, used in error messages.
    public let name: String
    /// Every member, in declaration order.
    public let members: [Member]
    /// The function-pointer members in declaration order, each with its ``MethodDescriptor/offset``.
    public let methods: [MethodDescriptor]
    /// The data members in declaration order, with their offsets.
    public let fields: [FieldDescriptor]
    /// `sizeof` the table.
    public let size: Int
    /// `_Alignof` the table.
    public let alignment: Int

    /// A hash of each method's name, in ``methods``' order: a name is found by comparing hashes, then the
    /// name itself once. A dictionary of names hashed each lookup with `Hasher`, a third of the cost of a
    /// delegate's `implement` past the closure.
    private let methodNameHashes: [UInt64]
    private let fieldIndex: [String: Int]
    /// Which signature each method accepted last, shared by every copy (see `SlotTable.checkSignature`).
    let acceptedSignatures: AcceptedSignatures
    /// The first defect found; set by the initializers (and by reflection, for a layout Swift disagrees with).
    var problem: DelegateError?
    /// Function-pointer members that reflection keeps as opaque data because their C signature cannot be
    /// known (a struct by value that is not a ``CValue``), with the reason; by name. Looking one up as a
    /// method or a data member throws that reason instead of "no such method".
    var refusedMethods: [String: String] = [:]

    /// A table of function pointers only.
    public init(name: String, methods: [MethodDescriptor]) {
        self.init(name: name, members: methods.map(Member.method))
    }

    /// A table of function pointers and data members.
    public init(name: String, members: [Member]) {
        self.name = name
        self.members = members
        let layout = CType.structureLayout(members.map(\.type))
        size = members.isEmpty ? 0 : layout.size
        alignment = layout.alignment
        var methods: [MethodDescriptor] = []
        var fields: [FieldDescriptor] = []
        var problem: DelegateError?
        var seen = Set<String>()
        for (member, offset) in zip(members, layout.offsets) {
            if !seen.insert(member.name).inserted, problem == nil {
                problem = .duplicateMember(member.name, protocol: name)
            }
            switch member {
            case .method(var method):
                method.offset = offset
                methods.append(method)
            case .field(let fieldName, let type):
                if problem == nil, let reason = type.problemAsValue() {
                    problem = .invalidMember(fieldName, protocol: name, reason: "its type \(reason)")
                }
                fields.append(FieldDescriptor(name: fieldName, type: type, offset: offset))
            }
        }
        self.methods = methods
        self.fields = fields
        self.problem = problem
        methodNameHashes = methods.map { Self.nameHash($0.name) }
        acceptedSignatures = AcceptedSignatures(count: methods.count)
        // On duplicates the first wins; lookups throw before they are consulted anyway.
        fieldIndex = Dictionary(fields.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Throws the first defect of the descriptor: a duplicated member name, or a data member whose type
    /// cannot be stored (`void`, an empty struct).
    public func validate() throws {
        if let problem { throw problem }
    }

    /// The method named `name`, or nil.
    public func method(named name: String) -> MethodDescriptor? {
        index(ofMethod: name).map { methods[$0] }
    }

    /// The index in ``methods`` of the first method named `name`, or nil.
    @inline(__always)
    private func index(ofMethod name: String) -> Int? {
        let hash = Self.nameHash(name)
        // Counted loops over the hashes' buffer, in a closure that reads nothing of `self`: a debug build
        // runs a range's iterator unspecialized, and a closure that read `methods` copied the whole
        // descriptor; the two cost some 6,000 instructions for every slot a delegate implemented.
        var candidate = 0
        while true {
            candidate = methodNameHashes.withUnsafeBufferPointer { [candidate] hashes in
                var index = candidate
                while index < hashes.count && hashes[index] != hash { index += 1 }
                return index
            }
            guard candidate < methods.count else { return nil }
            if methods[candidate].name == name { return candidate }
            candidate += 1  // another name of the same hash
        }
    }

    /// FNV-1a of `name`'s UTF-8 bytes: a few instructions a byte, where `Hasher` runs SipHash.
    private static func nameHash(_ name: String) -> UInt64 {
        var name = name  // `withUTF8` makes a string of another form contiguous first
        return name.withUTF8 { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return hash
        }
    }

    /// The data member named `name`, or nil.
    public func field(named name: String) -> FieldDescriptor? {
        fieldIndex[name].map { fields[$0] }
    }

    /// The index in ``methods`` of `name`, after checking the descriptor. For a name that is not a
    /// method, says what it is instead: a function pointer reflection could not describe
    /// (``DelegateError/invalidMember(_:protocol:reason:)``), a data member
    /// (``DelegateError/notAMethod(_:protocol:type:)``), or nothing, with the nearest method names
    /// (``DelegateError/unknownMethod(_:protocol:suggestions:)``).
    func methodIndex(of name: String) throws -> Int {
        try validate()
        if let index = index(ofMethod: name) { return index }
        if let reason = refusedMethods[name] { throw DelegateError.invalidMember(name, protocol: self.name, reason: reason) }
        if let field = field(named: name) { throw DelegateError.notAMethod(name, protocol: self.name, type: field.type) }
        throw DelegateError.unknownMethod(name, protocol: self.name, suggestions: NearestNames.nearest(to: name, in: methods.map(\.name)))
    }

    /// The data member `name`, after checking the descriptor; for a method's name throws
    /// ``DelegateError/notAField(_:protocol:signature:)``, for an unknown name
    /// ``DelegateError/unknownField(_:protocol:suggestions:)`` with the nearest data member names.
    func checkedField(_ name: String) throws -> FieldDescriptor {
        try validate()
        if let field = field(named: name), refusedMethods[name] == nil { return field }
        if let method = method(named: name) { throw DelegateError.notAField(name, protocol: self.name, signature: method.signature) }
        if let reason = refusedMethods[name] { throw DelegateError.invalidMember(name, protocol: self.name, reason: reason) }
        throw DelegateError.unknownField(name, protocol: self.name, suggestions: NearestNames.nearest(to: name, in: fields.map(\.name)))
    }
}
