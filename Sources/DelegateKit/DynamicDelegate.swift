import CFFIShim
import Synchronization

/// A C callback table whose slots are Swift closures, bound and unbound at run time.
///
/// ```swift
/// let d = DynamicDelegate(protocol: cookieIO)
/// try d.implement("read") { (cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, n: Int) -> Int in … }
/// d.responds(to: "read")   // true; an unimplemented slot reads NULL in `table`
/// fopencookie(cookie, "r", d.table…)
/// ```
///
/// ## Lifetime
/// The delegate owns ``table`` and every closure it installed, and frees them when it is deinitialized.
/// C must not read the table or call its function pointers after that. An implementation that is
/// replaced or removed may still be running on another thread, so its code is retired, not freed: it
/// stays valid until the delegate goes away, or until ``reclaimRetiredImplementations()``.
///
/// ## Threads
/// The delegate is `Sendable`. C may call any slot from any thread while other threads implement or
/// remove: each slot is replaced by one atomic store, so a call sees the old or the new function, never
/// a torn pointer, and a slot being replaced is never NULL in between. Calls take no lock; `implement`,
/// `remove` and the other changes are serialized by a lock. Closures are `@Sendable` because C decides
/// which thread runs them.
public final class DynamicDelegate: @unchecked Sendable {  // Mutable state is behind `state`; `table` is written with atomics.
    /// The layout this delegate fills.
    public let descriptor: ProtocolDescriptor
    /// The C table, laid out as ``descriptor`` says, for C to use; valid while the delegate lives.
    public let table: UnsafeMutableRawPointer

    private struct State {
        /// The closure installed in each slot, by method index.
        var installed: [CClosure?]
        /// Replaced closures that a C call may still be running; freed with the delegate.
        var retired: [CClosure] = []
    }
    private let state: Mutex<State>

    /// An empty table for `descriptor`: every slot NULL, every data member zero.
    public init(protocol descriptor: ProtocolDescriptor) {
        self.descriptor = descriptor
        let alignment = max(descriptor.alignment, MemoryLayout<UnsafeRawPointer>.alignment)
        table = .allocate(byteCount: max(descriptor.size, alignment), alignment: alignment)
        table.initializeMemory(as: UInt8.self, repeating: 0, count: max(descriptor.size, alignment))
        state = Mutex(State(installed: Array(repeating: nil, count: descriptor.methods.count)))
    }

    deinit {
        table.deallocate()
    }

    // MARK: Implementing

    /// Implements `method` with a closure whose Swift types give its C signature, replacing any earlier
    /// implementation.
    ///
    /// Throws ``DelegateError/unknownMethod(_:protocol:)``, or
    /// ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` naming both signatures when the
    /// closure's C signature is not the method's. A failed call changes nothing.
    @inlinable
    public func implement<each A: CValue, R: CValue>(
        _ method: String, _ body: @escaping @Sendable (repeat each A) -> R
    ) throws {
        try implement(method, thunk: CallThunk.typed(body))
    }

    /// Implements a method that returns `void`.
    @inlinable
    public func implement<each A: CValue>(_ method: String, _ body: @escaping @Sendable (repeat each A) -> Void) throws {
        try implement(method, thunk: CallThunk.typed(body))
    }

    /// Implements `method` with a closure that reads its arguments and sets its result through a
    /// ``CInvocation`` of the method's signature.
    public func implement(_ method: String, dynamic body: @escaping @Sendable (CInvocation) -> Void) throws {
        let index = try descriptor.methodIndex(of: method)
        try implement(method, thunk: CallThunk.dynamic(descriptor.methods[index].signature, body))
    }

    /// Implements `method` with an existing closure, which the delegate keeps alive while it may be called.
    public func implement(_ method: String, with closure: CClosure) throws {
        let index = try checkedMethodIndex(method, signature: closure.signature)
        install(closure, at: index)
    }

    @usableFromInline
    func implement(_ method: String, thunk: CallThunk) throws {
        // Check before allocating executable memory, so a mismatch costs nothing and changes nothing.
        let index = try checkedMethodIndex(method, signature: thunk.signature)
        install(try CClosure(thunk: thunk), at: index)
    }

    private func checkedMethodIndex(_ method: String, signature: CSignature) throws -> Int {
        let index = try descriptor.methodIndex(of: method)
        let expected = descriptor.methods[index].signature
        guard expected.accepts(signature) else {
            throw DelegateError.signatureMismatch(
                method: method, protocol: descriptor.name, expected: expected, actual: signature)
        }
        return index
    }

    private func install(_ closure: CClosure, at index: Int) {
        state.withLock { state in
            // The slot goes from the old code straight to the new: never NULL in between.
            store(closure.address, at: index)
            if let old = state.installed[index] { state.retired.append(old) }
            state.installed[index] = closure
        }
    }

    private func store(_ code: UnsafeRawPointer?, at index: Int) {
        let slot = (table + descriptor.methods[index].offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        cffi_store_pointer(slot, code)
    }

    // MARK: Removing and looking up

    /// Removes the implementation of `method`; its slot reads NULL again. Returns whether there was one.
    /// A name the protocol does not have is not an error here: there is nothing to remove.
    @discardableResult
    public func removeImplementation(for method: String) -> Bool {
        guard let index = try? descriptor.methodIndex(of: method) else { return false }
        return state.withLock { state in
            guard let old = state.installed[index] else { return false }
            store(nil, at: index)
            state.installed[index] = nil
            state.retired.append(old)
            return true
        }
    }

    /// Whether `method` has an implementation, which is whether its slot in ``table`` is non-NULL:
    /// what C's "is this callback set?" test sees.
    public func responds(to method: String) -> Bool {
        implementation(for: method) != nil
    }

    /// The closure currently implementing `method`, or nil (also for a name the protocol lacks).
    public func implementation(for method: String) -> CClosure? {
        guard let index = try? descriptor.methodIndex(of: method) else { return nil }
        return state.withLock { $0.installed[index] }
    }

    /// The current implementation of `method` as a Swift function of the given type, or nil when the
    /// slot is empty. Calling it calls the implementation's C function pointer, exactly as C would.
    ///
    /// The function keeps that implementation alive; it does not follow later `implement` calls.
    /// Throws ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` when `type` does not
    /// have the method's C signature.
    @inlinable
    public func implementation<each A: CValue, R: CValue>(
        for method: String, as type: ((repeat each A) -> R).Type
    ) throws -> ((repeat each A) -> R)? {
        let signature = try CSignature.of(R.self, repeat (each A).self)
        guard let closure = try implementation(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) -> R in closure.callThroughC(repeat each argument) }
    }

    /// The current implementation of a `void` method as a Swift function of the given type, or nil.
    @inlinable
    public func implementation<each A: CValue>(
        for method: String, as type: ((repeat each A) -> Void).Type
    ) throws -> ((repeat each A) -> Void)? {
        let signature = try CSignature.of(CVoid.self, repeat (each A).self)
        guard let closure = try implementation(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) in
            let _: CVoid = closure.callThroughC(repeat each argument)
        }
    }

    @usableFromInline
    func implementation(for method: String, checking signature: CSignature) throws -> CClosure? {
        let index = try checkedMethodIndex(method, signature: signature)
        return state.withLock { $0.installed[index] }
    }

    /// Frees the code of every implementation replaced or removed so far.
    ///
    /// Call it only when no C call can be running a replaced implementation (for example when the C
    /// library that uses the table is idle). Without it, retired code is freed with the delegate.
    public func reclaimRetiredImplementations() {
        let retired = state.withLock { state in
            defer { state.retired = [] }
            return state.retired
        }
        _ = retired  // Released here, outside the lock.
    }

    // MARK: Data members and validation

    /// Writes `value` into the data member `field`, whose C type must be `T`'s.
    ///
    /// Throws ``DelegateError/unknownField(_:protocol:)`` or
    /// ``DelegateError/fieldTypeMismatch(field:protocol:expected:actual:)``. Write fields before C starts
    /// using the table: C reads them without synchronization.
    public func setField<T: CValue>(_ field: String, _ value: T) throws {
        let member = try descriptor.checkedField(field)
        let type = try T.checkedCType()
        guard member.type.accepts(type) else {
            throw DelegateError.fieldTypeMismatch(
                field: field, protocol: descriptor.name, expected: member.type, actual: type)
        }
        state.withLock { _ in (table + member.offset).storeBytes(of: value, as: T.self) }
    }

    /// Reads the data member `field` as a `T` of the same C type.
    public func field<T: CValue>(_ field: String, as type: T.Type = T.self) throws -> T {
        let member = try descriptor.checkedField(field)
        let cType = try T.checkedCType()
        guard member.type.accepts(cType) else {
            throw DelegateError.fieldTypeMismatch(
                field: field, protocol: descriptor.name, expected: member.type, actual: cType)
        }
        return state.withLock { _ in UnsafeRawPointer(table + member.offset).loadUnaligned(as: T.self) }
    }

    /// Checks the table is ready for C: the descriptor is well formed and every required method is
    /// implemented; otherwise throws ``DelegateError/missingRequiredMethods(_:protocol:)`` listing them.
    public func validate() throws {
        try descriptor.validate()
        let missing = state.withLock { state in
            descriptor.methods.indices.filter { descriptor.methods[$0].isRequired && state.installed[$0] == nil }
        }
        if !missing.isEmpty {
            throw DelegateError.missingRequiredMethods(missing.map { descriptor.methods[$0].name }, protocol: descriptor.name)
        }
    }
}
