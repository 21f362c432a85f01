/// One data member of a C callback table, such as `sqlite3_module`'s `int iVersion`.
public struct FieldDescriptor: Hashable, Sendable {
    /// The member's name in the C struct.
    public let name: String
    /// The member's C type.
    public let type: CType
    /// The byte offset of the member in the table.
    public let offset: Int
}
