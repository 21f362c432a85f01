/// A base class for wrappers whose C callbacks are closure properties, declared with ``Slot``:
///
/// ```swift
/// final class CookieStream: BlockDelegate {
///     @Slot("read")  var onRead:  ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int)?
///     @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int32)?
///     init() throws { try super.init(protocol: cookieIO) }
/// }
/// let stream = try CookieStream()
/// stream.onRead = { _, _, n in n }   // fills the "read" slot of `stream.table`
/// stream.onRead = nil                // empties it again
/// ```
///
/// Every `@Slot` is checked when the object is created: a property that names no method of the protocol,
/// or whose closure type has another C signature than its method, makes the initializer throw
/// ``DelegateError/slotMismatch(property:slot:error:)`` naming the property and both signatures. (A
/// property setter cannot throw, so the check cannot wait.)
///
/// ## Threads
/// A `BlockDelegate` is not `Sendable`, and its closure properties are not `@Sendable`: they run on the
/// thread C calls them from. That fits the many C APIs that call back on the thread that drives them
/// (stdio cookies, SAX parsers, `qsort`). For a C library that calls back from threads of its own, use
/// ``DynamicDelegate`` directly: it takes `@Sendable` closures, so the compiler checks what they capture.
open class BlockDelegate {
    /// The delegate behind the properties; use it for everything ``Slot`` does not cover.
    public let dynamicDelegate: DynamicDelegate

    /// The C table, for C to use; valid while this object lives.
    public var table: UnsafeMutableRawPointer { dynamicDelegate.table }

    /// A block delegate for the table `descriptor` describes, with every slot empty.
    /// `file` and `line` record where the object is made, as ``DynamicDelegate/init(protocol:file:line:)`` says.
    ///
    /// Throws ``DelegateError/slotMismatch(property:slot:error:)`` for the first `@Slot` that does not fit
    /// the table, naming the property and both signatures.
    public init(protocol descriptor: ProtocolDescriptor, file: StaticString = #fileID, line: UInt = #line) throws {
        dynamicDelegate = DynamicDelegate(protocol: descriptor, file: file, line: line)
        try validateSlots()
    }

    /// A block delegate for a C struct type Swift imports (see ``TypedDelegate``), whose `@Slot`s may name
    /// members by key path. ``dynamicDelegate`` is a ``TypedDelegate`` of that type; bind ``table`` to
    /// it where C wants it typed (`table.assumingMemoryBound(to: fx_plugin.self)`). Throws as
    /// ``init(protocol:file:line:)`` does.
    public init<Table>(for table: Table.Type, file: StaticString = #fileID, line: UInt = #line) throws {
        dynamicDelegate = TypedDelegate(for: table, file: file, line: line)
        try validateSlots()
    }

    /// Throws ``DelegateError/slotMismatch(property:slot:error:)`` for the first `@Slot` that does not fit the protocol.
    private func validateSlots() throws {
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            for child in current.children {
                guard let slot = child.value as? any SlotDeclaration, let label = child.label else { continue }
                // The compiler stores a wrapped property `x` as `_x`.
                let property = "\(type(of: self)).\(label.hasPrefix("_") ? String(label.dropFirst()) : label)"
                if let error = slot.mismatch(with: dynamicDelegate.descriptor) {
                    throw DelegateError.slotMismatch(property: property, slot: slot.declaration, error: error)
                }
            }
            mirror = current.superclassMirror
        }
    }
}
