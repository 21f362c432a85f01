import CFFIShim
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
/// ``forwardingTarget``, or reads NULL (see ``SlotPolicy``).
///
/// ## Lifetime
/// The delegate owns ``table`` and every closure it installed, and frees them when it is deinitialized.
/// C must not read the table or call its function pointers after that. When a removal (or a replacing
/// `implement`, or an observation's `cancel()`) returns, no thread runs what it removed, and the delegate
/// holds nothing of it any more: the closure and what it captured are released then. Only the small,
/// fixed-size code a C caller may still hold a pointer to stays, owned by the slot: a late call through
/// it goes to what the slot holds now, and the slot's next implementation reuses it.
///
/// ## Threads
/// The delegate is `Sendable`. C may call any slot from any thread while other threads change it: each
/// change is published with one atomic store, so a call sees the old or the new state, never a torn one,
/// and a slot being replaced is never NULL in between. Calls take no lock; changes are serialized by one.
/// Closures are `@Sendable` because C decides which thread runs them.
public class DynamicDelegate: @unchecked Sendable {  // Mutable state is behind `state`; `table` is written atomically.
    /// The layout this delegate fills.
    public let descriptor: ProtocolDescriptor
    /// The C table, laid out as ``descriptor`` says, for C to use; valid while the delegate lives.
    public let table: UnsafeMutableRawPointer
    /// Where the delegate was made, for the message of a call after it is gone (formatted only then).
    let origin: SourceLocation

    // Only ever touched under `state`'s lock, so its pointers and objects cross threads safely.
    struct SlotState: @unchecked Sendable {
        /// Bottom to top; the last one is what C calls.
        var entries: [Implementation] = []
        var observers: [Observer] = []
        /// The wrapped table's function, at the bottom of the stack.
        var original: UnsafeRawPointer?
        var policy: SlotPolicy = .nullWhenUnimplemented
        /// Made the first time the slot needs more than one closure per call.
        var cell: PlanCell?
        var dispatcher: CClosure?
        var plan: SlotPlan?
        /// Retired plans and implementations that calls may still be running; each is released as soon as
        /// a change of the slot finds no thread running it (see ``sweep(_:waitedFor:)``).
        var unsettled: [any Retirable] = []
        /// Stubs no implementation uses, idle and forwarding to the slot, for the next one to take.
        var freeStubs: [SlotStub] = []
    }

    struct State: @unchecked Sendable {  // Likewise: only touched under the lock.
        var slots: [SlotState]
        var forwarding: ForwardingTarget?
        /// Delegates that forward to this one and must hear when a slot starts or stops responding.
        var dependents: [WeakDelegate] = []
        var uniqueKeys = 0
    }
    let state: Locked<State>

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
        self.descriptor = descriptor
        self.origin = origin
        let alignment = max(descriptor.alignment, MemoryLayout<UnsafeRawPointer>.alignment)
        let bytes = max(descriptor.size, alignment, minimumByteCount)
        table = .allocate(byteCount: bytes, alignment: alignment)
        table.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        state = Locked(State(slots: Array(repeating: SlotState(), count: descriptor.methods.count)))
        CallbackScope.adopt(self)
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
        copyTable(from: original)
    }

    /// Makes the new table a copy of `original`, every slot the original function (see ``init(protocol:wrapping:)``).
    func copyTable(from original: UnsafeRawPointer) {
        table.copyMemory(from: original, byteCount: descriptor.size)
        state.withLock { state in
            for (index, method) in descriptor.methods.enumerated() {
                let function = original.load(fromByteOffset: method.offset, as: UnsafeRawPointer?.self)
                state.slots[index].original = function
            }
        }
    }

    deinit {
        if let forwarding = state.withLock({ $0.forwarding }) {
            forwardingDelegates.withLock { _ = $0.removeValue(forKey: UInt(bitPattern: table)) }
            if case .delegate(let target) = forwarding { target.removeDependent(self) }
        }
        #if DEBUG
        // Every closure learns which method it served, so a late call through a copied pointer says so.
        state.withLock { state in
            func message(_ index: Int) -> String {
                Graveyard.deadCallMessage(method: descriptor.methods[index].name, descriptor: descriptor.name, origin: "\(origin)")
            }
            for (index, slot) in state.slots.enumerated() {
                for implementation in slot.entries { implementation.stub?.epitaph = message(index) }
                for case let implementation as Implementation in slot.unsettled { implementation.stub?.epitaph = message(index) }
                for stub in slot.freeStubs { stub.epitaph = message(index) }
                slot.dispatcher?.epitaph = message(index)
            }
        }
        Graveyard.entomb(table: table, descriptor: descriptor, origin: "\(origin)")
        #else
        table.deallocate()
        #endif
    }

    // MARK: Implementing

    /// Implements `method` with a closure whose Swift types give its C signature.
    ///
    /// Without a `key`, this replaces the slot's previous plain implementation (the slot's default key);
    /// with a `key` already in the slot's stack, the old entry is removed and the new one goes on top.
    /// `once` makes the implementation serve exactly one call and then remove itself.
    ///
    /// Throws ``DelegateError/unknownMethod(_:protocol:suggestions:)`` (with the nearest method names),
    /// ``DelegateError/notAMethod(_:protocol:type:)`` for a data member's name, or
    /// ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` naming both signatures when the
    /// closure's C signature is not the method's. A failed call changes nothing.
    @inlinable @discardableResult
    public func implement<each A: CValue, R: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (repeat each A) -> R
    ) throws -> Registration {
        try push(method, key: key, once: once, .plain(CallThunk.typed(body)))
    }

    /// Implements a method that returns `void`.
    @inlinable @discardableResult
    public func implement<each A: CValue>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false,
        _ body: @escaping @Sendable (repeat each A) -> Void
    ) throws -> Registration {
        try push(method, key: key, once: once, .plain(CallThunk.typed(body)))
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
    func uniqueKey() -> any Hashable & Sendable {
        UniqueKey(value: state.withLock { state in
            state.uniqueKeys += 1
            return state.uniqueKeys
        })
    }

    @usableFromInline @discardableResult
    func push(
        _ method: String, key: (any Hashable & Sendable)?, once: Bool, _ body: Implementation.Body,
        typed: TypedEntry? = nil
    ) throws -> Registration {
        let index = try descriptor.methodIndex(of: method)
        let signature: CSignature
        switch body {
        case .plain(let thunk): signature = thunk.signature
        case .override(let thunk): signature = thunk.signature
        }
        try checkSignature(signature, of: index)
        let key = key.map { AnyHashable($0) } ?? DefaultKey.erased
        // A plain implementation is called directly; only a layer that needs a plan needs the dispatcher.
        let stub = try Implementation.stubSignature(body, once: once).map { try takeStub(index, prepared: $0) }
        if stub == nil { try ensureDispatcher(index) }
        let implementation = Implementation(key: key, body: body, once: once, typed: typed, stub: stub, index: index)
        let (dependents, running) = state.withLock { state in
            var replaced: [Implementation] = []
            if let old = state.slots[index].entries.firstIndex(where: { $0.key == key }) {
                replaced.append(state.slots[index].entries.remove(at: old))
            }
            state.slots[index].entries.append(implementation)
            republish(index, &state)
            return (state.dependents, retire(replaced, slot: index, &state))
        }
        settle(running, slot: index)
        notify(dependents, method)
        return Registration(delegate: self, method: method, key: key)
    }

    func checkSignature(_ signature: CSignature, of index: Int) throws {
        let method = descriptor.methods[index]
        guard method.signature.accepts(signature) else {
            throw DelegateError.signatureMismatch(
                method: method.name, protocol: descriptor.name, expected: method.signature, actual: signature)
        }
    }

    /// Makes the slot's dispatcher (once), so that publishing never has to allocate or fail.
    func ensureDispatcher(_ index: Int) throws {
        guard state.withLock({ $0.slots[index].dispatcher == nil }) else { return }
        let cell = PlanCell()
        let dispatcher = try PlanCell.dispatcher(for: cell, signature: descriptor.methods[index].signature)
        _ = try FFISignature.prepared(descriptor.methods[index].signature)
        state.withLock { state in
            guard state.slots[index].dispatcher == nil else { return }  // another thread was first
            state.slots[index].cell = cell
            state.slots[index].dispatcher = dispatcher
        }
    }

    // MARK: Removing and looking up

    /// Removes every implementation of `method` (the whole stack); the slot falls back to the original,
    /// the forwarding target, or NULL. Returns whether there was any. A name the protocol does not have
    /// is not an error here: there is nothing to remove.
    @discardableResult
    public func removeImplementation(for method: String) -> Bool {
        removeEntries(method) { _ in true }
    }

    /// Removes the implementation of `method` registered under `key`. Returns whether there was one.
    @discardableResult
    public func removeImplementation(for method: String, key: some Hashable & Sendable) -> Bool {
        removeImplementation(for: method, matching: AnyHashable(key))
    }

    /// Whether `method` has an implementation registered under `key`.
    public func hasImplementation(for method: String, key: some Hashable & Sendable) -> Bool {
        hasImplementation(for: method, matching: AnyHashable(key))
    }

    @discardableResult
    func removeImplementation(for method: String, matching key: AnyHashable) -> Bool {
        removeEntries(method) { $0.key == key }
    }

    func hasImplementation(for method: String, matching key: AnyHashable) -> Bool {
        guard let index = try? descriptor.methodIndex(of: method) else { return false }
        return state.withLock { $0.slots[index].entries.contains { $0.key == key && !$0.isSpent } }
    }

    private func removeEntries(_ method: String, where matches: (Implementation) -> Bool) -> Bool {
        guard let index = try? descriptor.methodIndex(of: method) else { return false }
        let (removed, dependents, running) = state.withLock { state in
            let doomed = state.slots[index].entries.filter(matches)
            guard !doomed.isEmpty else { return (false, [WeakDelegate](), [any Retirable]()) }
            state.slots[index].entries.removeAll(where: matches)
            republish(index, &state)
            return (true, state.dependents, retire(doomed, slot: index, &state))
        }
        settle(running, slot: index)
        notify(dependents, method)
        return removed
    }

    /// Removes one implementation object (a spent `once`, or one removing itself).
    func remove(_ implementation: Implementation, slot index: Int) {
        let (dependents, running) = state.withLock { state in
            guard let position = state.slots[index].entries.firstIndex(where: { $0 === implementation }) else {
                return ([WeakDelegate](), [any Retirable]())
            }
            let removed = state.slots[index].entries.remove(at: position)
            republish(index, &state)
            return (state.dependents, retire([removed], slot: index, &state))
        }
        settle(running, slot: index)
        notify(dependents, descriptor.methods[index].name)
    }

    /// Retires implementations taken out of slot `index` (after the slot stopped pointing at them) and
    /// returns everything a call of the slot may still be running, for the caller to wait for once it
    /// has released the lock (a running call may itself be waiting for the lock), then ``settle(_:slot:)``.
    ///
    /// Every retired plan stays on the list until no thread runs it: a call inside an old plan can
    /// still start any implementation that plan holds, so concurrent removers each wait for all. An
    /// implementation without a stub needs no entry of its own: only the plans that hold it can run it.
    func retire(_ removed: [Implementation], slot index: Int, _ state: inout State) -> [any Retirable] {
        for implementation in removed where implementation.stub != nil {
            implementation.retire()
            state.slots[index].unsettled.append(implementation)
        }
        return state.slots[index].unsettled
    }

    /// Waits until no other thread runs any of `running` (retired objects of slot `index`), then
    /// releases them and whatever else no thread runs any more (see ``sweep(_:waitedFor:)``).
    func settle(_ running: [any Retirable], slot index: Int) {
        if !running.isEmpty { waitUntilNotRunning(running) }
        sweep(index, waitedFor: Set(running.map { ObjectIdentifier($0) }))
    }

    /// Releases the retired objects of slot `index` that no call can use any more: a plan, and an
    /// implementation's closure with what it captured; its stub goes back to the slot for reuse.
    ///
    /// A call records what it runs before it checks that it was retired (a stub's guard) or replaced (a
    /// plan), so once a wait saw no other thread running an object, a call that records it afresh finds
    /// it retired and touches nothing it holds (it forwards, or reads the cell again). Objects in
    /// `waitedFor` are therefore released unless this very thread is inside them (a closure that removed
    /// itself); the others only once no thread at all records them. What stays is released by a later
    /// change of the slot, or with the delegate.
    func sweep(_ index: Int, waitedFor waited: Set<ObjectIdentifier> = []) {
        let released: [any Retirable] = state.withLock { state in
            var released: [any Retirable] = []
            guard !state.slots[index].unsettled.isEmpty else { return released }
            // After every retirement of what is scanned (they happened before it was listed).
            cffi_synchronize_calls()
            state.slots[index].unsettled.removeAll { object in
                let identity = object.runningIdentity
                let running = waited.contains(ObjectIdentifier(object))
                    ? cffi_is_running_here(identity) : cffi_is_running(identity)
                guard running == 0 else { return false }
                released.append(object)
                return true
            }
            for case let implementation as Implementation in released {
                if let stub = implementation.releaseStub() { state.slots[index].freeStubs.append(stub) }
            }
            return released
        }
        _ = released  // The last references go here, outside the lock: deinitializers run user code.
    }

    /// A stub for a new plain implementation of slot `index`: an idle one of the slot's, or a new one
    /// made with the implementation's prepared signature (every signature a slot accepts is laid out as
    /// the slot's, so any of them serves every later implementation too).
    func takeStub(_ index: Int, prepared: FFISignature) throws -> SlotStub {
        if let stub = state.withLock({ $0.slots[index].freeStubs.popLast() }) { return stub }
        let slot = (table + descriptor.methods[index].offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        return try SlotStub(slot: slot, prepared: prepared)
    }

    /// Whether a call of `method` reaches more than a default value: it has an implementation, an
    /// original function, or a forwarding target that responds. Under the default policy this is whether
    /// its slot in ``table`` is non-NULL, which is what C's "is this callback set?" test sees.
    public func responds(to method: String) -> Bool {
        guard let index = try? descriptor.methodIndex(of: method) else { return false }
        return state.withLock { responds(index, $0) }
    }

    private func responds(_ index: Int, _ state: State) -> Bool {
        let slot = state.slots[index]
        return slot.entries.contains { !$0.isSpent } || slot.original != nil || forwardRoute(index, state)?.responds == true
    }

    /// What C would call for `method` right now, as a Swift function of the given type; nil when the slot
    /// is NULL. Each call goes through the slot's function pointer at that moment, exactly as C would.
    /// The function keeps the delegate alive.
    ///
    /// Throws ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` when `type` does not
    /// have the method's C signature.
    @inlinable
    public func implementation<each A: CValue, R: CValue>(
        for method: String, as type: ((repeat each A) -> R).Type
    ) throws -> ((repeat each A) -> R)? {
        let signature = try CSignature.of(R.self, repeat (each A).self)
        guard let slot = try currentSlot(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) -> R in slot.call(repeat each argument) }
    }

    /// What C would call for a `void` method right now, as a Swift function of the given type, or nil.
    @inlinable
    public func implementation<each A: CValue>(
        for method: String, as type: ((repeat each A) -> Void).Type
    ) throws -> ((repeat each A) -> Void)? {
        let signature = try CSignature.of(CVoid.self, repeat (each A).self)
        guard let slot = try currentSlot(for: method, checking: signature) else { return nil }
        return { (argument: repeat each A) in
            let _: CVoid = slot.call(repeat each argument)
        }
    }

    @usableFromInline
    func currentSlot(for method: String, checking signature: CSignature) throws -> SlotFunction? {
        let index = try descriptor.methodIndex(of: method)
        try checkSignature(signature, of: index)
        guard loadSlot(index) != nil else { return nil }
        return SlotFunction(delegate: self, offset: descriptor.methods[index].offset,
                            prepared: try FFISignature.prepared(descriptor.methods[index].signature))
    }

    func loadSlot(_ index: Int) -> UnsafeRawPointer? {
        let slot = (table + descriptor.methods[index].offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        return cffi_load_pointer(slot).map(UnsafeRawPointer.init)
    }

    /// Does nothing: a removal now releases what it removed as soon as no thread runs it, and the code a
    /// C caller may still hold is reused by the slot. Kept so that existing callers compile.
    @available(*, deprecated, message: "removal releases what it removed; there is nothing left to reclaim")
    public func reclaimRetiredImplementations() {}

    // MARK: Policy

    /// Sets how `method`'s slot behaves when nothing implements it; see ``SlotPolicy``.
    public func setPolicy(_ policy: SlotPolicy, for method: String) throws {
        let index = try descriptor.methodIndex(of: method)
        if policy == .stable { try ensureDispatcher(index) }
        state.withLock { state in
            state.slots[index].policy = policy
            republish(index, &state)
        }
        sweep(index)
    }

    /// Sets the policy of every slot.
    public func setPolicy(_ policy: SlotPolicy) throws {
        for method in descriptor.methods { try setPolicy(policy, for: method.name) }
    }

    // MARK: Publishing

    /// Builds the slot's plan and points the table slot at the cheapest function that serves it.
    /// Runs under the lock; never allocates executable memory or fails (``ensureDispatcher(_:)`` did).
    func republish(_ index: Int, _ state: inout State) {
        let method = descriptor.methods[index]
        // Mutated in place: a copy that is then changed would duplicate the arrays on every change.
        if state.slots[index].entries.contains(where: \.isSpent) { state.slots[index].entries.removeAll { $0.isSpent } }
        let slot = state.slots[index]
        let route = forwardRoute(index, state)
        let top = slot.entries.last
        let responds = top != nil || slot.original != nil || route?.responds == true

        let target: UnsafeRawPointer?
        if slot.policy == .stable || (!slot.observers.isEmpty && responds) {
            target = slot.dispatcher?.address
        } else if let top {
            target = top.directAddress ?? slot.dispatcher?.address
        } else if let original = slot.original {
            target = original
        } else if route?.responds == true {
            target = slot.dispatcher?.address
        } else {
            target = nil
        }

        if let cell = slot.cell, let prepared = try? FFISignature.prepared(method.signature) {
            let plan = SlotPlan(
                owner: self, slot: index, methodName: method.name, prepared: prepared,
                levels: slot.entries.reversed(),
                before: slot.observers.filter { $0.timing == .before },
                after: slot.observers.filter { $0.timing == .after },
                original: slot.original, forward: route?.route)
            // The plan first: a dispatcher reached through the new pointer must find it. Sequentially
            // consistent, against the check a dispatched call makes after recording the plan it loaded.
            cell.plan.store(Unmanaged.passUnretained(plan).toOpaque(), ordering: .sequentiallyConsistent)
            if let old = slot.plan { state.slots[index].unsettled.append(old) }
            state.slots[index].plan = plan
        }
        require(target != nil || !responds || slot.dispatcher != nil,
                     "slot '\(method.name)' needs its dispatcher before publishing")
        // A stub runs its implementation only while the slot holds it, so that a call through a stale
        // pointer reaches what the slot holds now: published before the slot points at it, retired
        // after the slot points elsewhere. (A stub C could enter with the slot pointing back at it while
        // retired would forward to itself forever.)
        let targetStub = top?.stub.flatMap { $0.address == target ? $0 : nil }
        targetStub?.publish()
        let address = (table + method.offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        cffi_store_pointer(address, target)
        for entry in slot.entries {
            if let stub = entry.stub, stub !== targetStub, stub.isPublished { stub.retire() }
        }
    }
}

/// A place in the source, as `#fileID` and `#line` give it: "DelegateKitTests/Stress.swift:12".
struct SourceLocation: CustomStringConvertible, @unchecked Sendable {  // StaticString is immutable.
    let file: StaticString
    let line: UInt

    var description: String { "\(file):\(line)" }
}

/// The key `implement` uses when given none, so implementing again replaces (A2DynamicDelegate).
struct DefaultKey: Hashable, Sendable {
    /// Made once: wrapping a value in AnyHashable looks its conformance up at run time, every time.
    nonisolated(unsafe) static let erased = AnyHashable(DefaultKey())  // Immutable, and AnyHashable of a Sendable value.
}

/// A key made for `override` without one, so each call adds a layer (REKit).
struct UniqueKey: Hashable, Sendable {
    let value: Int
}

/// How a slot behaves when nothing implements it.
public enum SlotPolicy: Sendable {
    /// The slot is NULL while nothing implements it, so C's "is this callback set?" test sees the truth.
    /// C libraries that copy the table (`fopencookie`) or test each slot once will not see later changes.
    case nullWhenUnimplemented
    /// The slot always holds one function, which dispatches to the current implementation, the chain or
    /// the default value, so changes reach C libraries that copied the table. Costs one dispatch per call.
    case stable
}

/// A delegate that forwards to another, held weakly so forwarding does not keep it alive.
struct WeakDelegate {
    weak var delegate: DynamicDelegate?
}

/// Calls a slot of a delegate's table through libffi, as C would.
@usableFromInline
struct SlotFunction: @unchecked Sendable {  // The table is the delegate's, which `delegate` keeps alive.
    let delegate: DynamicDelegate
    let offset: Int
    let prepared: FFISignature

    @usableFromInline
    func call<each A: CValue, R: CValue>(_ argument: repeat each A) -> R {
        let slot = (delegate.table + offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        return withArgumentArray(repeat each argument) { arguments in
            withUnsafeTemporaryAllocation(byteCount: max(prepared.resultBufferSize, MemoryLayout<R>.size), alignment: 16) {
                let result = $0.baseAddress.unsafelyUnwrapped
                result.initializeMemory(as: UInt8.self, repeating: 0, count: $0.count)
                if let function = cffi_load_pointer(slot) {
                    prepared.call(function, result: result, arguments: arguments)
                }
                // libffi writes a narrow integer as a whole register; on a little-endian machine its low
                // bytes, the value itself, come first.
                return UnsafeRawPointer(result).loadUnaligned(as: R.self)
            }
        }
    }
}
