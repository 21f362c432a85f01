/// An array of C records laid out as a ``ProtocolDescriptor`` says, for tables described at run time:
/// ``TypedEntryArray`` with members named by string, each row a ``DynamicDelegate``.
///
/// ```swift
/// let registration = try ProtocolDescriptor(parsing: "struct reg { const char *name; int (*func)(void *state); };", name: "reg")
/// let functions = EntryArray(protocol: registration, capacity: 4)
/// try functions.append { row in
///     try row.setField("name", "answer")
///     try row.delegate.implement("func") { (state: UnsafeMutableRawPointer?) -> Int32 in 42 }
/// }
/// ```
///
/// Lifetime and changes are as for ``TypedEntryArray``.
public final class EntryArray: @unchecked Sendable {  // Its state is its rows'.
    private let rows: EntryRows<DynamicDelegate>
    private let origin: SourceLocation

    /// The layout of one record.
    public let descriptor: ProtocolDescriptor

    /// An empty array of at most `capacity` records laid out as `descriptor` says: every record zero.
    public init(protocol descriptor: ProtocolDescriptor, capacity: Int, file: StaticString = #fileID, line: UInt = #line) {
        self.descriptor = descriptor
        rows = EntryRows(
            name: "EntryArray of \(descriptor.name)", size: descriptor.size, alignment: descriptor.alignment,
            capacity: capacity)
        origin = SourceLocation(file: file, line: line)
        CallbackScope.adopt(self)
    }

    /// The first record, for C: ``count`` rows, then a record of zeros. Stable while the array lives.
    public var baseAddress: UnsafeMutableRawPointer { rows.base }

    /// The number of rows, not counting the terminator.
    public var count: Int { rows.count }

    /// The most rows the array holds.
    public var capacity: Int { rows.capacity }

    /// Each row's delegate, in order: for changing a row's closures later (override, observe, remove).
    public var delegates: [DynamicDelegate] { rows.delegates }

    /// Appends a row that `fill` fills, and returns its index; as `TypedEntryArray`'s `append` does.
    @discardableResult
    public func append(_ fill: (Row) throws -> Void) throws -> Int {
        let (descriptor, origin) = (descriptor, origin)
        return try rows.append(
            makeDelegate: { DynamicDelegate(protocol: descriptor, filling: $0, file: origin.file, line: origin.line) },
            fill: { try fill(Row(delegate: $0, recorded: $1, rows: rows)) })
    }

    /// Changes the row at `index`; as ``TypedEntryArray/update(row:_:)``.
    public func update(row index: Int, _ fill: (Row) throws -> Void) throws {
        try rows.update(index) { try fill(Row(delegate: $0, recorded: $1, rows: rows)) }
    }

    /// One row while its fill closure runs.
    public struct Row {
        /// The row's delegate: implement, override and observe its methods through it.
        public let delegate: DynamicDelegate
        let recorded: RecordedRow
        let rows: EntryRows<DynamicDelegate>

        /// Sets the data member `field` to `value` (written when the fill closure returns); throws as
        /// ``DynamicDelegate/setField(_:_:)`` does.
        public func setField<T: CValue>(_ field: String, _ value: T) throws {
            recorded.record(value, at: try delegate.checkedField(field, T.self).offset)
        }

        /// Sets the data member `field`, a pointer, to a copy of `string` as a C string, which the array
        /// keeps as long as it lives.
        public func setField(_ field: String, _ string: String) throws {
            let offset = try delegate.checkedField(field, UnsafePointer<CChar>?.self).offset
            recorded.record(Optional(rows.keep(string)), at: offset)
        }

        /// Sets the data member `field`, a pointer, to `closure`'s function pointer, which the array keeps
        /// as long as it lives (a `void *` holding a function); as ``TypedEntryArray/Row/setField(_:holding:)``.
        public func setField(_ field: String, holding closure: CClosure) throws {
            let offset = try delegate.checkedField(field, UnsafeRawPointer?.self).offset
            recorded.record(Optional(closure.address), at: offset)
            rows.keep(closure)
        }
    }
}
