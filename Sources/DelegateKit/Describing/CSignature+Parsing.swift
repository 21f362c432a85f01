extension CSignature {
    /// Parses a C function type, such as `int (const void *, const void *)`, `int (*)(void *)` or a
    /// prototype `ssize_t read(void *cookie, char *buffer, size_t size)`.
    ///
    /// Qualifiers are ignored, every pointer is ``CType/pointer``, and names are read as on LP64 Linux
    /// (`long` and `size_t` are 64 bits, `char` is signed). A name the parser does not know may appear
    /// behind a pointer (`sqlite3_file *`). Throws ``DelegateError/syntax(message:text:line:column:)``
    /// saying what was expected and where.
    ///
    /// `typedefs` names more types, such as a library's own (`["sqlite3_int64": .int64]`).
    public init(parsing text: String, typedefs: [String: CType] = [:]) throws {
        var parser = try CDeclarationParser(text)
        parser.typedefs.merge(typedefs) { _, added in added }
        self = try parser.parseSignature()
    }
}
