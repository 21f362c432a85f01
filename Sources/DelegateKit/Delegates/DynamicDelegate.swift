import Synchronization

/// A C callback table whose slots are Swift closures, bound and unbound at run time.
///
/// ```swift
/// let d = DynamicDelegate(protocol: cookieIO)
/// try d.implement("read") { (cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, n: Int) -> Int in … }
/// d.responds(to: "read")   // true; an unimplemented slot reads NULL in `table`
/// ```
///
/// Each slot holds a stack of implementations (the newest on top is what C calls; an `override(_:key:once:_:)`
/// can call the one below through ``Next``), observers, and, for a delegate that wraps a live C table,
/// that table's original function at the bottom. A slot nothing implements goes to the
/// forwarding target (``setForwardingTarget(_:)``), or reads NULL (see ``SlotPolicy``).
///
/// ## Lifetime
/// The delegate owns ``table`` and every closure it installed, and frees them when it is deinitialized.
/// C must not read the table or call its function pointers after that. A removal (or a replacing
/// `implement`, or an observation's `cancel()`) returns at once, without waiting for other threads; no call
/// made after it runs what it removed. What it removed is released as soon as no call runs it: at once,
/// or when the last call running it returns (``waitForRemovedCalls(timeout:)`` waits for that). Only the
/// small, fixed-size code a C caller may still hold a pointer to stays, owned by the slot: a late call
/// through it goes to what the slot holds now, and the slot's next implementation reuses it.
///
/// ## Threads
/// The delegate is `Sendable`. C may call any slot from any thread while other threads change it: each
/// change is published with one atomic store, so a call sees the old or the new state, never a torn one,
/// and a slot being replaced is never NULL in between. Calls take no lock; changes are serialized by one.
/// Closures are `@Sendable` because C decides which thread runs them.
public class DynamicDelegate: @unchecked Sendable {  // Its state is its slot table's.
    /// The layout this delegate fills.
    public var descriptor: ProtocolDescriptor { slots.descriptor }
    /// The C table, laid out as ``descriptor`` says, for C to use; valid while the delegate lives. For a
    /// delegate that fills a table in place (``init(protocol:filling:file:line:)``), that table, which C owns.
    public var table: UnsafeMutableRawPointer { slots.table }
    /// The slots, their stacks and the protocol that changes them.
    @usableFromInline let slots: SlotTable

    /// An empty table for `descriptor`: every slot NULL, every data member zero.
    ///
    /// `file` and `line` record where the delegate is made: in debug builds, a C call through its table
    /// or closures after it is deinitialized stops the process with a message naming them.
    public convenience init(protocol descriptor: ProtocolDescriptor, file: StaticString = #fileID, line: UInt = #line) {
        self.init(protocol: descriptor, minimumByteCount: 0, origin: SourceLocation(file: file, line: line))
    }

    /// An empty table of at least `minimumByteCount` bytes: a typed table is as large as its Swift type
    /// even when its descriptor is defective.
    init(protocol descriptor: ProtocolDescriptor, minimumByteCount: Int, origin: SourceLocation) {
        slots = SlotTable(protocol: descriptor, minimumByteCount: minimumByteCount, origin: origin)
        CallbackScope.adopt(self)
    }

    /// A delegate of `table`, which C owns (see ``init(protocol:filling:file:line:)``); its slots' values
    /// are read as the originals unless `readsOriginals` is false (a defective descriptor's offsets).
    init(protocol descriptor: ProtocolDescriptor, filling table: UnsafeMutableRawPointer, readsOriginals: Bool, origin: SourceLocation) {
        slots = SlotTable(protocol: descriptor, filling: table, readsOriginals: readsOriginals, origin: origin)
        CallbackScope.adopt(self)
    }

    /// Fills a table that C allocated and owns, in place: each slot's value found there stays at the
    /// bottom of the slot's stack, where an override reaches it through ``Next`` (GObject's chain-up to
    /// the parent class's method) and where removing the overrides puts it back. The data members are
    /// left alone, and so is every slot nothing is installed in.
    ///
    /// ```swift
    /// let classDelegate = DynamicDelegate(protocol: objectClass, filling: klass)  // in class_init
    /// try classDelegate.override("finalize") { (next: Next<UnsafeMutableRawPointer?, Void>, object: UnsafeMutableRawPointer?) in
    ///     // … free the instance's own state …
    ///     next(object)  // chain up
    /// }
    /// ```
    ///
    /// ## Lifetime
    /// The delegate writes into `table` whenever a slot changes, and C calls the closures installed there,
    /// so it must live as long as C may use the table:
    /// - A table that lives as long as the process (a GObject class struct, a static table): keep the
    ///   delegate for as long too, in a global or a static property.
    /// - A table its library frees (a per-connection or per-module struct): keep the delegate until the
    ///   library has freed the table or will not call through it again, then release it without changing
    ///   it further: its deinitialization does not touch the table. To give the table back to C while C
    ///   goes on using it, remove what you installed first: the slots hold the values found there again.
    ///
    /// Everything else (stacks, observers, policies, removal) works as for a table the delegate owns.
    /// `table` must be at least `descriptor.size` bytes long, laid out as `descriptor` says.
    public convenience init(
        protocol descriptor: ProtocolDescriptor, filling table: UnsafeMutableRawPointer, file: StaticString = #fileID, line: UInt = #line
    ) {
        self.init(protocol: descriptor, filling: table, readsOriginals: true, origin: SourceLocation(file: file, line: line))
    }

    /// A table that starts as a copy of a live C table: data members copied, every slot the original
    /// function pointer itself (no cost until overridden). Overrides see the original below them through
    /// ``Next``; removing them restores it; a NULL original slot can be implemented.
    ///
    /// `original` must point to a table laid out as `descriptor` says, at least `descriptor.size` bytes
    /// long (describe only the members an older, shorter table version has), and its functions must stay
    /// valid while this delegate may call them.
    public convenience init(
        protocol descriptor: ProtocolDescriptor, wrapping original: UnsafeRawPointer, file: StaticString = #fileID, line: UInt = #line
    ) {
        self.init(protocol: descriptor, file: file, line: line)
        slots.copyTable(from: original)
    }

    // MARK: Implementing

    /// Implements `method` with a closure whose Swift types give its C signature.
    ///
    /// The closure returns a ``CValue`` type, or nothing for a `void` method (as for ``CClosure``, a
    /// one-expression closure's value C cannot receive is discarded). Without a `key`, this replaces the
    /// slot's previous plain implementation (the slot's default key); with a `key` already in the slot's
    /// stack, the old entry is removed and the new one goes on top. `once` makes the implementation serve
    /// exactly one call and then remove itself.
    ///
    /// Throws ``DelegateError/unknownMethod(_:protocol:suggestions:)`` (with the nearest method names),
    /// ``DelegateError/notAMethod(_:protocol:type:)`` for a data member's name, or
    /// ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` naming both signatures when the
    /// closure's C signature is not the method's. A failed call changes nothing.
    @inlinable @discardableResult
    public func implement<each A: CValue, R>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (repeat each A) -> R
    ) throws -> Registration {
        try push(method, key: key, once: once, .plain(CallThunk.typed(anyResult: body)))
    }

    /// Implements `method` with a closure that reads its arguments and sets its result through a
    /// ``CInvocation`` of the method's signature.
    @discardableResult
    public func implement(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        dynamic body: @escaping @Sendable (CInvocation) -> Void
    ) throws -> Registration {
        let index = try descriptor.methodIndex(of: method)
        return try push(method, key: key, once: once, .plain(CallThunk.dynamic(descriptor.methods[index].signature, body)))
    }

    /// Implements a variadic method (its signature ``CSignature/isVariadic``) with a closure that reads
    /// the fixed arguments and sets the result through a ``CInvocation``, and reads the rest from the
    /// ``CVariadicArguments``. The typed form is `implement(_:key:once:_:)` with a closure whose last
    /// parameter is `CVariadicArguments`.
    ///
    /// Throws ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` for a method that is
    /// not variadic.
    @discardableResult
    public func implement(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        variadic body: @escaping @Sendable (CInvocation, CVariadicArguments) -> Void
    ) throws -> Registration {
        let index = try descriptor.methodIndex(of: method)
        var signature = descriptor.methods[index].signature
        signature.isVariadic = true
        try slots.checkSignature(signature, of: index)  // before the thunk's layout refuses a method that is not variadic
        return try push(method, key: key, once: once, .plain(CallThunk.variadic(signature, body)))
    }

    /// Adds a layer on top of `method` that receives ``Next``, the way to call what lies below it (REKit's
    /// supermethod). Without a `key` each call adds a new layer; with one, it replaces that layer.
    @inlinable @discardableResult
    public func override<each A: CValue, R: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<repeat each A, R>, repeat each A) -> R
    ) throws -> Registration {
        try push(method, key: key ?? uniqueKey(), once: once, .override(OverrideThunk.typed(body)))
    }

    /// Adds a layer on top of a method returning `void`.
    @inlinable @discardableResult
    public func override<each A: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (Next<repeat each A, Void>, repeat each A) -> Void
    ) throws -> Registration {
        try push(method, key: key ?? uniqueKey(), once: once, .override(OverrideThunk.typed(body)))
    }

    /// A key no other layer has, for `override(_:key:once:_:)` without one.
    @usableFromInline
    func uniqueKey() -> any Hashable & Sendable { slots.uniqueKey() }

    /// Puts `body` on top of `method`'s stack, replacing the entry of its key.
    @usableFromInline @discardableResult
    func push(
        _ method: String, key: (any Hashable & Sendable)?, once: Bool, _ body: Implementation.Thunk,
        typed: TypedEntry? = nil
    ) throws -> Registration {
        let key = SlotKey(key)
        let (index, implementation) = try slots.entry(method, key: key, once: once, body, typed: typed)
        slots.change { slots.put(implementation, at: index, &$0, &$1) }
        return Registration(slots: slots, slot: index, key: key)
    }

    // MARK: Removing and looking up

    /// Removes every implementation of `method` (the whole stack); the slot falls back to the original,
    /// the forwarding target, or NULL. Returns whether there was any. A name the protocol does not have
    /// is not an error here: there is nothing to remove.
    @discardableResult
    public func removeImplementation(for method: String) -> Bool {
        guard let index = slots.slotIndex(method) else { return false }
        return slots.change { slots.removeEntries(at: index, &$0, &$1) { _ in true } }
    }

    /// Removes the implementation of `method` registered under `key`. Returns whether there was one.
    @discardableResult
    public func removeImplementation(for method: String, key: some Hashable & Sendable) -> Bool {
        guard let index = slots.slotIndex(method) else { return false }
        return slots.removeImplementation(at: index, matching: SlotKey(key))
    }

    /// Waits until no call runs anything removed from this delegate before the wait began: implementations
    /// removed or replaced, layers, observers cancelled, plans replaced by any change. Use it when what a
    /// removed closure used (a buffer, a file, a lock) is about to be freed.
    ///
    /// A removal never waits: once it returns, no call made afterwards runs what it removed, but a call
    /// made before may still be running it on another thread. This waits for those calls, sleeping (no
    /// spinning) until the last of them returns, or until `timeout` has passed.
    ///
    /// - Important: Waiting for a call that is itself waiting for the waiting thread deadlocks until the
    ///   timeout: a closure blocked on a lock the waiter holds, on a semaphore the waiter signals only
    ///   afterwards, or in `DispatchQueue.main.sync` while the main thread waits here. A call that left by
    ///   `longjmp` to a `setjmp` site of your own counts as running until its thread calls into DelegateKit
    ///   again, blocks in the kernel, or exits; one that jumped to
    ///   ``CFunction/call(catchingJumpsTo:_:returning:)->JumpOutcome<R>`` does not.
    /// - Parameter timeout: How long to wait at most.
    /// - Returns: `true` when no such call runs any more; `false` when the timeout passed first.
    /// - Throws: ``DelegateError/waitingForOwnCall(method:protocol:)`` when the calling thread is itself
    ///   inside such a call (a closure waiting for its own removal): that wait could never end.
    @discardableResult
    public func waitForRemovedCalls(timeout: Duration) throws(DelegateError) -> Bool {
        try slots.waitForCallsOfRemovedObjects(timeout: timeout)
    }

    /// Whether `method` has an implementation registered under `key`.
    public func hasImplementation(for method: String, key: some Hashable & Sendable) -> Bool {
        guard let index = slots.slotIndex(method) else { return false }
        return slots.hasImplementation(at: index, matching: SlotKey(key))
    }

    /// Whether a call of `method` reaches more than a default value: it has an implementation, an
    /// original function, or a forwarding target that responds. Under the default policy this is whether
    /// its slot in ``table`` is non-NULL, which is what C's "is this callback set?" test sees.
    public func responds(to method: String) -> Bool {
        slots.responds(to: method)
    }
}
