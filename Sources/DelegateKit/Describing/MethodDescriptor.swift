/// One function-pointer slot of a C callback table: its name, its C signature and whether C requires it.
public struct MethodDescriptor: Hashable, Sendable {
    /// The member's name in the C struct (`read`, `xRead`).
    public var name: String
    /// The C signature of the function the slot points to.
    public var signature: CSignature
    /// Whether the C library calls the slot without checking it for NULL, so it must be implemented.
    public var isRequired: Bool
    /// The byte offset of the slot in the table. Set by the ``ProtocolDescriptor`` that holds it;
    /// 0 for a method not yet placed in one.
    public internal(set) var offset: Int

    /// A method slot; optional unless `isRequired`.
    public init(name: String, signature: CSignature, isRequired: Bool = false) {
        self.name = name
        self.signature = signature
        self.isRequired = isRequired
        self.offset = 0
    }
}
