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
@propertyWrapper
public struct Slot<each A: CValue, R> {
    /// The closure type of the property.
    public typealias Closure = (repeat each A) -> R

    /// The name of the method this property fills.
    public let method: String
    private let signature: Result<CSignature, any Error>
    private let makeThunk: (AssumedSendable<repeat each A, R>) throws -> CallThunk
    /// For a slot named by a key path: the descriptor of the struct it points into, once the closure
    /// type was found to be the member's, or why not.
    private var keyPathTable: Result<ProtocolDescriptor, any Error>?
    /// How the property names its method, for messages: `"read"` or `\cookie_io_functions_t.read`.
    private(set) var declaration: String
    private var value: Closure?

    /// Not available: `@Slot` works only on properties of ``BlockDelegate`` subclasses.
    @available(*, unavailable, message: "@Slot can only be used on properties of BlockDelegate subclasses")
    public var wrappedValue: Closure? {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    /// Reads and writes the property of a ``BlockDelegate``; writing implements or removes the method.
    public static subscript<Owner: BlockDelegate>(
        _enclosingInstance owner: Owner,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Owner, Closure?>,
        storage storageKeyPath: ReferenceWritableKeyPath<Owner, Slot>
    ) -> Closure? {
        get { owner[keyPath: storageKeyPath].value }
        set {
            let slot = owner[keyPath: storageKeyPath]
            if let newValue {
                do {
                    try owner.dynamicDelegate.push(slot.method, key: nil, once: false, .plain(slot.makeThunk(AssumedSendable(newValue))))
                } catch {
                    // The types were checked when the owner was created, so only the system refusing
                    // executable memory gets here, and a setter has no way to report it.
                    misuse("\(Owner.self): setting the closure for '\(slot.method)' failed: \(error)")
                }
            } else {
                // Only what the property set: overrides added through the delegate stay.
                owner.dynamicDelegate.removeImplementation(for: slot.method, matching: DefaultKey.erased)
            }
            owner[keyPath: storageKeyPath].value = newValue
        }
    }
}

extension Slot where R: CValue {
    /// A slot for the method named `method`, with the C signature of the property's closure type.
    public init(_ method: String) {
        self.method = method
        declaration = "\"\(method)\""
        value = nil
        signature = Result { try CSignature.of(R.self, repeat (each A).self) }
        makeThunk = { closure in try CallThunk.typed { (argument: repeat each A) -> R in closure.call(repeat each argument) } }
    }

    /// A slot for a function-pointer member of a C struct Swift imports, for a ``BlockDelegate``
    /// created with ``BlockDelegate/init(for:file:line:)`` for that struct. The property's closure type must be
    /// the member's Swift function type exactly (checked when the owner is created):
    ///
    /// ```swift
    /// @Slot(\sqlite3_io_methods.xClose) var onClose: ((UnsafeMutablePointer<sqlite3_file>?) -> Int32)?
    /// ```
    public init<Table, Member>(_ member: KeyPath<Table, Member>) {
        let resolved = Result {
            try ReflectedTable.method(member, closureType: SwiftTypeName.functionType(repeat (each A).self, returning: R.self))
        }
        self.init((try? resolved.get().name) ?? "\(member)")
        declaration = "\(member)"
        keyPathTable = resolved.map { _ in ReflectedTable.of(Table.self).descriptor }
    }
}

extension Slot where R == Void {
    /// A slot for a method returning `void`.
    public init(_ method: String) {
        self.method = method
        declaration = "\"\(method)\""
        value = nil
        signature = Result { try CSignature.of(CVoid.self, repeat (each A).self) }
        makeThunk = { closure in try CallThunk.typed { (argument: repeat each A) in closure.call(repeat each argument) } }
    }

    /// A slot for a function-pointer member returning `void` of a C struct Swift imports.
    public init<Table, Member>(_ member: KeyPath<Table, Member>) {
        let resolved = Result {
            try ReflectedTable.method(member, closureType: SwiftTypeName.functionType(repeat (each A).self, returning: Void.self))
        }
        self.init((try? resolved.get().name) ?? "\(member)")
        declaration = "\(member)"
        keyPathTable = resolved.map { _ in ReflectedTable.of(Table.self).descriptor }
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

/// Carries a closure the compiler cannot prove `Sendable` to the thread C calls it on. Only ``Slot``
/// uses it; ``BlockDelegate`` documents that contract. (A class, because a variadic function value
/// cannot be abstracted into a generic `T`.)
final class AssumedSendable<each A, R>: @unchecked Sendable {
    let call: (repeat each A) -> R
    init(_ call: @escaping (repeat each A) -> R) { self.call = call }
}
