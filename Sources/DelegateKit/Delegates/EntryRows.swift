import Glibc
import Synchronization

/// What ``EntryArray`` and ``TypedEntryArray`` share: the records' memory, a delegate per row, the C
/// strings the rows point to, and the order a new row is written in.
///
/// The memory is allocated once, for `capacity` rows and the terminator after them, zeroed, so that its
/// address never changes while C holds it. Each row is a table a delegate fills in place (`Delegate` is
/// ``DynamicDelegate`` or ``TypedDelegate``), so its closures are slots: replacing one follows the
/// slot-change protocol, and they are released with the delegate.
///
/// An append takes the first free record, under the lock, and fills it outside: the fill closure runs the
/// program's code, which no lock of DelegateKit's is held across (see ``Locked``), and may itself append.
/// A record being filled is one C reads as a terminator: its closures go in first (the fill closure
/// installs them through the row's delegate), then the data members it was given, recorded meanwhile,
/// and its first member last, after a release fence. C walking a NULL-terminated array stops at a record
/// whose first member is zero, so it sees a row whole or not at all (unless that first member is a
/// function pointer), and rows in order: one whose fill finished first stays unseen behind one still
/// being filled. A failed fill gives its record back, zero, for the next append.
final class EntryRows<Delegate: DynamicDelegate>: @unchecked Sendable {  // Mutable state is in `state`.
    let base: UnsafeMutableRawPointer
    let stride: Int
    let capacity: Int
    /// The array's type as messages name it (`TypedEntryArray<luaL_Reg>`).
    let name: String

    /// What a record is: free (zero), taken by an append whose fill runs, or a finished row.
    private enum Record {
        case free, filling, row(Delegate)

        var isFree: Bool { if case .free = self { true } else { false } }
    }

    private struct State {
        var records: [Record]
        /// Every C string a row was given, kept until the array goes: C may have copied the pointer
        /// (CPython keeps a method's `ml_name`), so a replaced one stays too.
        var strings: [UnsafeMutablePointer<CChar>] = []
        /// The closures rows hold as plain pointers (not slots), kept as the strings are.
        var closures: [CClosure] = []
    }
    private let state: Locked<State>

    init(name: String, size: Int, alignment: Int, capacity: Int) {
        self.name = name
        // A record's stride: its size rounded up to its alignment, as C lays out an array.
        let alignment = max(alignment, 1)
        stride = max((size + alignment - 1) / alignment * alignment, alignment)
        self.capacity = max(capacity, 0)
        let bytes = stride * (self.capacity + 1)
        base = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: alignment)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        state = Locked(State(records: Array(repeating: .free, count: self.capacity)))
    }

    deinit {
        // Each delegate releases its closures; a delegate filling memory it does not own never touches
        // that memory as it goes, so the memory goes after them.
        let (records, strings, closures) = state.withLock { state in
            defer { state = State(records: []) }
            return (state.records, state.strings, state.closures)
        }
        _ = consume records
        _ = consume closures
        strings.forEach { free($0) }
        base.deallocate()
    }

    /// The rows C sees: those before the first record that is not a finished row.
    var delegates: [Delegate] {
        state.withLock { state in
            var rows: [Delegate] = []
            for record in state.records {
                guard case .row(let delegate) = record else { break }
                rows.append(delegate)
            }
            return rows
        }
    }

    var count: Int { delegates.count }

    /// A copy of `string` as a C string, alive as long as the array.
    func keep(_ string: String) -> UnsafePointer<CChar> {
        let copy = strdup(string)!
        state.withLock { $0.strings.append(copy) }
        return UnsafePointer(copy)
    }

    /// Keeps `closure` as long as the array.
    func keep(_ closure: CClosure) {
        state.withLock { $0.closures.append(closure) }
    }

    /// Appends a row: a delegate made by `makeDelegate` at the first free record, handed to `fill` with
    /// the recorder of its data members; returns its index. Writes nothing C can see when `fill` throws.
    ///
    /// With an `initial` record, its bytes are the row's before the delegate is made, which takes its
    /// function pointers as the slots' originals, except the first `firstMemberSize` bytes: those are
    /// recorded, to be written last.
    func append(
        initial: UnsafeRawPointer? = nil, firstMemberSize: Int = 0,
        makeDelegate: (UnsafeMutableRawPointer) -> Delegate, fill: (Delegate, RecordedRow) throws -> Void
    ) throws -> Int {
        let free = state.withLock { state -> Int? in
            guard let index = state.records.firstIndex(where: \.isFree) else { return nil }
            state.records[index] = .filling
            return index
        }
        guard let index = free else { throw DelegateError.entryArrayFull(type: name, capacity: capacity) }
        let record = base + index * stride
        let recorded = RecordedRow()
        if let initial {
            let first = min(max(firstMemberSize, 0), stride)
            (record + first).copyMemory(from: initial + first, byteCount: stride - first)
            if first > 0 { recorded.record(bytes: UnsafeRawBufferPointer(start: initial, count: first), at: 0) }
        }
        let delegate = makeDelegate(record)
        do {
            try fill(delegate, recorded)
        } catch {
            // The record is the terminator again before the delegate, and its closures, go.
            record.initializeMemory(as: UInt8.self, repeating: 0, count: stride)
            state.withLock { $0.records[index] = .free }
            throw error
        }
        recorded.write(to: record, firstMemberLast: true)
        state.withLock { $0.records[index] = .row(delegate) }
        return index
    }

    /// Runs `fill` on the row at `index`, then writes the data members it recorded.
    func update(_ index: Int, fill: (Delegate, RecordedRow) throws -> Void) throws {
        let row = state.withLock { state -> Delegate? in
            guard state.records.indices.contains(index), case .row(let delegate) = state.records[index] else { return nil }
            return delegate
        }
        guard let row else { throw DelegateError.entryArrayIndex(type: name, index: index, count: count) }
        let recorded = RecordedRow()
        try fill(row, recorded)
        // Under the lock: two updates of one row write its members one after the other.
        state.withLock { _ in recorded.write(to: base + index * stride, firstMemberLast: false) }
    }
}

/// The data members a fill closure gave one row, written once the closure returns.
final class RecordedRow {
    private var writes: [(offset: Int, write: (UnsafeMutableRawPointer) -> Void)] = []

    /// Records writing `value`, of a trivial type, at `offset` of the record; a later write of the same
    /// member wins.
    func record<Value>(_ value: Value, at offset: Int) {
        writes.removeAll { $0.offset == offset }
        writes.append((offset, { ($0 + offset).storeBytes(of: value, as: Value.self) }))
    }

    /// Records writing a copy of `bytes` at `offset`.
    func record(bytes: UnsafeRawBufferPointer, at offset: Int) {
        let copy = Array(bytes)
        writes.removeAll { $0.offset == offset }
        writes.append((offset, { record in copy.withUnsafeBytes { (record + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }))
    }

    /// Writes every member recorded into `record`, the one at offset 0 last, after a release fence, when
    /// `firstMemberLast` (a new row, see ``EntryRows``).
    fileprivate func write(to record: UnsafeMutableRawPointer, firstMemberLast: Bool) {
        let first = firstMemberLast ? writes.first { $0.offset == 0 } : nil
        for write in writes where first == nil || write.offset != 0 { write.write(record) }
        if let first {
            atomicMemoryFence(ordering: .releasing)
            first.write(record)
        }
    }
}
