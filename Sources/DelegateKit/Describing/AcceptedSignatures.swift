import Synchronization

/// For each method of a ``ProtocolDescriptor``, the identity of the signature it last accepted (a
/// `SlotTable` stores its prepared form's): an `implement` of that signature again, on any delegate made
/// from a copy of the descriptor, knows the answer by comparing two words.
///
/// Comparing the signatures themselves copies each `CType` (an enum whose structure case holds an array)
/// and was a twentieth of a new delegate's `implement`. Only identities of objects that live for ever are
/// stored, so one found here names the same signature as when it was stored; a read without ordering is
/// enough, as nothing behind it is read. A cache, not part of the descriptor's value: every two are equal.
final class AcceptedSignatures: Hashable, @unchecked Sendable {  // Atomic words only.
    private let accepted: UnsafeMutablePointer<Atomic<UInt>>
    private let count: Int

    init(count: Int) {
        self.count = count
        accepted = .allocate(capacity: max(count, 1))
        for index in 0..<count { (accepted + index).initialize(to: Atomic(0)) }
    }

    deinit {
        accepted.deinitialize(count: count)
        accepted.deallocate()
    }

    /// Whether method `index` accepted the signature of `identity` before.
    func contains(_ identity: ObjectIdentifier, at index: Int) -> Bool {
        accepted[index].load(ordering: .relaxed) == UInt(bitPattern: identity)
    }

    /// Records that method `index` accepts the signature of `identity`, an object that lives for ever.
    func insert(_ identity: ObjectIdentifier, at index: Int) {
        accepted[index].store(UInt(bitPattern: identity), ordering: .relaxed)
    }

    static func == (a: AcceptedSignatures, b: AcceptedSignatures) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
