import Synchronization

/// The slot table of every delegate that has a forwarding target, by table address: what lets a loop
/// through a raw table pointer be seen, and the lock that makes chain changes one at a time.
let forwardingTables = Locked<[UInt: WeakSlotTable]>([:])

/// Where a ``DynamicDelegate`` sends the calls of slots it does not implement (A2DynamicDelegate's
/// `realDelegate`, a responder chain).
public enum ForwardingTarget: @unchecked Sendable {  // The raw table's memory is the caller's to keep valid.
    /// Another delegate, followed as it changes.
    case delegate(DynamicDelegate)
    /// A C table laid out as the descriptor says; its slots are read at each call.
    case table(UnsafeRawPointer, ProtocolDescriptor)

    var descriptor: ProtocolDescriptor {
        switch self {
        case .delegate(let delegate): return delegate.descriptor
        case .table(_, let descriptor): return descriptor
        }
    }
}
