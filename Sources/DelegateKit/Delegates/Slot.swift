/// A closure property of a ``BlockDelegate`` that fills one method slot of its table.
///
/// Setting the property implements the method with the closure (under the slot's default key, replacing
/// the previous one); setting `nil` removes that implementation and leaves any overrides in place. The closure's
/// C signature comes from the declared property type, an optional function type whose parameter and
/// return types are ``CValue``s (or `Void` for the return):
///
/// ```swift
/// @Slot("write") var onWrite: ((UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Int)?
/// @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int32)?
/// ```
///
/// The closures need not be `@Sendable`: they run on the thread C calls them from (see ``BlockDelegate``).
///
/// A closure property takes up to 12 arguments, each of its own initializer (generated, like the
/// fixed-arity forms of `implement`, so that a call runs code specialized for the property's types);
/// implement a method of more with ``DynamicDelegate``.
@propertyWrapper
public struct Slot<Function> {
    /// The name of the method this property fills.
    public let method: String
    @usableFromInline let signature: Result<CSignature, any Error>
    /// Makes the thunk for a closure the property is set to. The initializers, one per arity (0 to 12
    /// arguments, in SlotInitializers.generated.swift), are inlinable, so this is specialized for the
    /// property's types: a closure property type cannot be a parameter pack, whose code Swift 6.3 runs
    /// with a metadata lookup per argument per call.
    @usableFromInline let makeThunk: (Function) throws -> CallThunk
    /// For a slot named by a key path: the descriptor of the struct it points into, once the closure
    /// type was found to be the member's, or why not.
    @usableFromInline var keyPathTable: Result<ProtocolDescriptor, any Error>?
    /// How the property names its method, for messages: `"read"` or `\cookie_io_functions_t.read`.
    @usableFromInline private(set) var declaration: String
    /// The closure the property holds, as `Any` so that no stored property's layout depends on
    /// `Function`: the struct's layout is then fixed when compiling, not computed by the runtime when the
    /// type is first used (a computation valgrind flags as reading uninitialised memory).
    private var value: Any?

    /// Not available: `@Slot` works only on properties of ``BlockDelegate`` subclasses.
    @available(*, unavailable, message: "@Slot can only be used on properties of BlockDelegate subclasses")
    public var wrappedValue: Function? {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    @usableFromInline
    init(method: String, signature: Result<CSignature, any Error>, makeThunk: @escaping (Function) throws -> CallThunk) {
        self.method = method
        self.signature = signature
        self.makeThunk = makeThunk
        declaration = "\"\(method)\""
        value = nil
    }

    /// A slot named by `member`, a key path into a C struct: `resolved` is the member found for the
    /// closure type, or why none fits.
    @usableFromInline
    init<Table, Member>(
        _ member: KeyPath<Table, Member>, closureType: String, signature: Result<CSignature, any Error>,
        makeThunk: @escaping (Function) throws -> CallThunk
    ) {
        let resolved = Result { try ReflectedTable.method(member, closureType: closureType) }
        self.init(method: (try? resolved.get().name) ?? "\(member)", signature: signature, makeThunk: makeThunk)
        declaration = "\(member)"
        keyPathTable = resolved.map { _ in ReflectedTable.of(Table.self).descriptor }
    }

    /// Reads and writes the property of a ``BlockDelegate``; writing implements or removes the method.
    public static subscript<Owner: BlockDelegate>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Function?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Slot>
    ) -> Function? {
        get { owner[keyPath: storageKeyPath].value.map { $0 as! Function } }
        set {
            let slot = owner[keyPath: storageKeyPath]
            if let newValue {
                do {
                    try owner.dynamicDelegate.push(slot.method, key: nil, once: false, .plain(slot.makeThunk(newValue)))
                } catch {
                    // The types were checked when the owner was created, so only the system refusing
                    // executable memory gets here, and a setter has no way to report it.
                    misuse("\(Owner.self): setting the closure for '\(slot.method)' failed: \(error)")
                }
            } else {
                // Only what the property set: overrides added through the delegate stay.
                let slots = owner.dynamicDelegate.slots
                if let index = slots.slotIndex(slot.method) {
                    slots.removeImplementation(at: index, matching: .default)
                }
            }
            owner[keyPath: storageKeyPath].value = newValue
        }
    }
}

/// What ``BlockDelegate`` checks of each `@Slot` when it is created.
protocol SlotDeclaration {
    var method: String { get }
    var declaration: String { get }
    func mismatch(with descriptor: ProtocolDescriptor) -> DelegateError?
}

extension Slot: SlotDeclaration {
    func mismatch(with descriptor: ProtocolDescriptor) -> DelegateError? {
        do {
            if let table = try keyPathTable?.get(), table != descriptor {
                return .invalidMember(method, protocol: descriptor.name, reason: "the slot's key path is into \(table.name), not \(descriptor.name)")
            }
            let index = try descriptor.methodIndex(of: method)
            let expected = descriptor.methods[index].signature
            let actual = try signature.get()
            if !expected.accepts(actual) {
                return .signatureMismatch(method: method, protocol: descriptor.name, expected: expected, actual: actual)
            }
            return nil
        } catch let error as DelegateError {
            return error
        } catch {
            misuse("only DelegateError is thrown here, not DelegateError: \(error)")
        }
    }
}

/// Carries a closure the compiler cannot prove `Sendable` to the thread C calls it on: the parameter-pack
/// form of ``BlockDelegate``'s owner-passing `implement` uses it; ``BlockDelegate`` documents that
/// contract. (A class, because a variadic function value cannot be abstracted into a generic `T`.)
final class AssumedSendable<each A, R>: @unchecked Sendable {
    let call: (repeat each A) -> R
    init(_ call: @escaping (repeat each A) -> R) { self.call = call }
}
