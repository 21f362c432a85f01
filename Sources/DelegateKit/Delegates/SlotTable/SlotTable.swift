import Synchronization

/// The slots of one C table and everything that changes them: what each slot holds (its stack of
/// implementations, its observers, the original function, its policy), the dispatcher and plan a slot
/// runs when it needs more than one closure per call, and the protocol by which a change reaches C and
/// lets go of what it removed (SlotChange.swift, with Publishing.swift, Retirement.swift and
/// Reclaimer.swift beside it). ``DynamicDelegate`` is the public face of one; nothing outside this folder
/// edits a slot but through ``change(_:)``.
///
/// A slot table lives exactly as long as its delegate, which owns it; what calls hold (a plan's owner, an
/// observer's, a deferred object's) refers to it weakly.
@usableFromInline
final class SlotTable: @unchecked Sendable {  // Mutable state is behind `state`; `table` is written atomically.
    /// The layout of ``table``.
    let descriptor: ProtocolDescriptor
    /// The C table, laid out as ``descriptor`` says.
    let table: UnsafeMutableRawPointer
    /// Whether ``table`` is this object's own, freed with it; false for a table C owns.
    let ownsTable: Bool
    /// Where the delegate was made, for the message of a call after it is gone (formatted only then).
    let origin: SourceLocation

    /// One slot's part of ``State``.
    ///
    /// A plain slot needs only its stack, original and policy; the rest (observers, a dispatcher and its
    /// plan, what a change retired) is held apart, made the first time a slot writes any of it. So a
    /// table's slots are one small allocation (32 bytes a slot, where 80 made a 16-slot table's array a
    /// large request, which malloc serves by first consolidating every freed small chunk).
    struct SlotState {
        /// Bottom to top; the last one is what C calls.
        var entries = ImplementationStack()
        /// The wrapped table's function, at the bottom of the stack.
        var original: UnsafeRawPointer?
        var policy: SlotPolicy = .nullWhenUnimplemented
        private var rare: Rare?

        /// The parts of a slot that only some slots ever write. Shared by copies of the slot's state,
        /// which only the slot's lock guards and only `State` holds: nothing copies a slot to change it.
        private final class Rare {
            // Unchecked: the delegate's lock makes every access exclusive (as `Locked.value`).
            @exclusivity(unchecked) var observers: [Observer] = []
            @exclusivity(unchecked) var cell: PlanCell?
            @exclusivity(unchecked) var dispatcher: CClosure?
            @exclusivity(unchecked) var plan: SlotPlan?
            @exclusivity(unchecked) var retiring: [any Retirable] = []
            @exclusivity(unchecked) var deferred: [any Retirable] = []
            @exclusivity(unchecked) var freeStubs: [SlotStub] = []
        }

        /// The slot's rare parts, made on first write.
        private mutating func rareParts() -> Rare {
            if let rare { return rare }
            let made = Rare()
            rare = made
            return made
        }

        var observers: [Observer] {
            get { rare?.observers ?? [] }
            _modify { yield &rareParts().observers }
        }
        /// Made the first time the slot needs more than one closure per call.
        var cell: PlanCell? {
            get { rare?.cell }
            _modify { yield &rareParts().cell }
        }
        var dispatcher: CClosure? {
            get { rare?.dispatcher }
            _modify { yield &rareParts().dispatcher }
        }
        var plan: SlotPlan? {
            get { rare?.plan }
            _modify { yield &rareParts().plan }
        }
        /// Plans and implementations a change retired, until it settles them (see SlotChange.swift).
        var retiring: [any Retirable] {
            get { rare?.retiring ?? [] }
            _modify { yield &rareParts().retiring }
        }
        /// Retired objects a call was running when their change settled: the ``Reclaimer`` releases them
        /// once no call does. Listed here too, so that later removals mark these plans (``retire(_:slot:_:)``).
        var deferred: [any Retirable] {
            get { rare?.deferred ?? [] }
            _modify { yield &rareParts().deferred }
        }
        /// Stubs no implementation uses, idle and forwarding to the slot, for the next one to take.
        var freeStubs: [SlotStub] {
            get { rare?.freeStubs ?? [] }
            _modify { yield &rareParts().freeStubs }
        }

        /// `count` empty slots, each made on its own: `Array(repeating:count:)` copies one, which counts
        /// a reference to each of its (empty) arrays per slot.
        static func empty(_ count: Int) -> [SlotState] {
            (0..<count).map { _ in SlotState() }
        }
    }

    struct State {  // Only touched under the lock (`Locked` is what crosses threads).
        var slots: [SlotState]
        var forwarding: ForwardingTarget?
        /// Slot tables that forward to this one and must hear when a slot starts or stops responding.
        var dependents: [WeakSlotTable] = []
        var uniqueKeys = 0
    }
    let state: Locked<State>
    /// How many stubs the slots hold free (``SlotState/freeStubs``), changed under the lock and read
    /// without it: an implement on a table with none, a new delegate's, takes no lock to find that out.
    /// A stale read costs at most a new stub where a free one had just come back.
    let freeStubCount = Atomic<Int>(0)

    /// An empty table of at least `minimumByteCount` bytes: every slot NULL, every data member zero. (A
    /// typed table is as large as its Swift type even when its descriptor is defective.)
    init(protocol descriptor: ProtocolDescriptor, minimumByteCount: Int, origin: SourceLocation) {
        self.descriptor = descriptor
        self.origin = origin
        let alignment = max(descriptor.alignment, MemoryLayout<UnsafeRawPointer>.alignment)
        let bytes = max(descriptor.size, alignment, minimumByteCount)
        table = .allocate(byteCount: bytes, alignment: alignment)
        table.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        ownsTable = true
        state = Locked(State(slots: SlotState.empty(descriptor.methods.count)))
    }

    /// The slots of `table`, which C owns; its slots' values are read as the originals unless
    /// `readsOriginals` is false (a defective descriptor's offsets).
    init(protocol descriptor: ProtocolDescriptor, filling table: UnsafeMutableRawPointer, readsOriginals: Bool, origin: SourceLocation) {
        self.descriptor = descriptor
        self.origin = origin
        self.table = table
        ownsTable = false
        state = Locked(State(slots: SlotState.empty(descriptor.methods.count)))
        if readsOriginals { readOriginals(from: table) }
    }

    /// Makes the table a copy of `original`, every slot the original function.
    func copyTable(from original: UnsafeRawPointer) {
        table.copyMemory(from: original, byteCount: descriptor.size)
        readOriginals(from: original)
    }

    /// Puts the function pointers of `original` at the bottom of the slots' stacks.
    private func readOriginals(from original: UnsafeRawPointer) {
        state.withLock { state in
            for (index, method) in descriptor.methods.enumerated() {
                let function = original.load(fromByteOffset: method.offset, as: UnsafeRawPointer?.self)
                state.slots[index].original = function
            }
        }
    }

    deinit {
        // A closure of this table that dropped the last reference to its delegate runs on: what it runs stays.
        deferRunningObjects(of: state.withLock { $0 })
        if let forwarding = state.withLock({ $0.forwarding }) {
            forwardingTables.withLock { _ = $0.removeValue(forKey: UInt(bitPattern: table)) }
            if case .delegate(let target) = forwarding { target.slots.removeDependent(self) }
        }
        #if DEBUG
        // Every closure learns which method it served, so a late call through a copied pointer says so.
        // Each method's message is made once, for its closures and the table's own slot alike.
        // By index, in place: a debug build runs iterators, `enumerated` and `+` of arrays unspecialized,
        // which cost a delegate going away some 8,000 instructions a slot.
        let place = "\(origin)"
        let messages = descriptor.methods.map { Graveyard.deadCallMessage(method: $0.name, descriptor: descriptor.name, origin: place) }
        state.withLock { state in
            for index in state.slots.indices {
                let message = messages[index]
                state.slots[index].entries.forEach { $0.stub?.epitaph = message }
                for case let implementation as Implementation in state.slots[index].retiring {
                    implementation.stub?.epitaph = message
                }
                for case let implementation as Implementation in state.slots[index].deferred {
                    implementation.stub?.epitaph = message
                }
                for stub in state.slots[index].freeStubs { stub.epitaph = message }
                state.slots[index].dispatcher?.epitaph = message
            }
        }
        if ownsTable { Graveyard.entomb(table: table, descriptor: descriptor, messages: messages) }
        #else
        if ownsTable { table.deallocate() }
        #endif
    }

    /// A key no other layer has, for an `override` without one.
    func uniqueKey() -> any Hashable & Sendable {
        UniqueKey(value: state.withLock { state in
            state.uniqueKeys += 1
            return state.uniqueKeys
        })
    }

    /// An entry for `method`'s stack running `body` under `key`, checked against the method's signature,
    /// with the stub or dispatcher it needs; ``put(_:at:_:_:)`` installs it, inside a change the caller
    /// runs from its own frame (see ``change(_:)``). Inlined into its one caller, `DynamicDelegate.push`:
    /// out of line it cost each slot implemented about 20 instructions more (an outlined copy of the key).
    @inline(__always)
    func entry(
        _ method: String, key: SlotKey, once: Bool, _ body: Implementation.Thunk, typed: TypedEntry?
    ) throws -> (index: Int, implementation: Implementation) {
        let index = try descriptor.methodIndex(of: method)
        switch body {
        case .plain(let thunk): try checkSignature(thunk.prepared, of: index)
        case .override(let thunk): try checkSignature(thunk.signature, of: index)
        }
        // A plain implementation is called directly; only a layer that needs a plan needs the dispatcher.
        let stub = try Implementation.stubSignature(body, once: once).map { try takeStub(index, prepared: $0) }
        if stub == nil { try ensureDispatcher(index) }
        return (index, Implementation(key: key, body: body, once: once, typed: typed, stub: stub))
    }

    /// The edit that puts `implementation` on top of slot `index`, replacing the entry of its key.
    func put(_ implementation: Implementation, at index: Int, _ state: inout State, _ changes: inout SlotChanges) {
        // Tested first: nearly every put replaces nothing, and the removal returns out of line.
        if state.slots[index].entries.contains(where: { $0.key == implementation.key }) {
            removeEntries(at: index, &state, &changes) { $0.key == implementation.key }
        }
        state.slots[index].entries.append(implementation)
        changes.changed(index)
    }

    /// ``checkSignature(_:of:)`` of a prepared signature, answered by identity where the method accepted it
    /// before: prepared signatures live for ever, one per spelling (see ``AcceptedSignatures``).
    func checkSignature(_ prepared: PreparedSignature, of index: Int) throws {
        let identity = ObjectIdentifier(prepared)
        if descriptor.acceptedSignatures.contains(identity, at: index) { return }
        try checkSignature(prepared.signature, of: index)
        descriptor.acceptedSignatures.insert(identity, at: index)
    }

    /// Throws ``DelegateError/signatureMismatch(method:protocol:expected:actual:)`` unless method `index`
    /// accepts `signature`.
    func checkSignature(_ signature: CSignature, of index: Int) throws {
        let method = descriptor.methods[index]
        guard method.signature.accepts(signature) else {
            throw DelegateError.signatureMismatch(
                method: method.name, protocol: descriptor.name, expected: method.signature, actual: signature)
        }
    }

    /// The slot of `method`, or nil for a name the protocol does not have (nothing there to find or
    /// remove).
    func slotIndex(_ method: String) -> Int? {
        try? descriptor.methodIndex(of: method)
    }

    func hasImplementation(at index: Int, matching key: SlotKey) -> Bool {
        state.withLock { $0.slots[index].entries.contains { $0.key == key && !$0.isSpent } }
    }

    /// The edit that takes the implementations `matches` accepts out of slot `index`'s stack; whether
    /// there was any.
    @discardableResult
    func removeEntries(
        at index: Int, _ state: inout State, _ changes: inout SlotChanges, where matches: (Implementation) -> Bool
    ) -> Bool {
        let doomed = state.slots[index].entries.remove(where: matches)
        guard !doomed.isEmpty else { return false }
        changes.removed(doomed, from: index)
        return true
    }

    /// Removes one implementation object (a spent `once`, or one removing itself).
    func remove(_ implementation: Implementation, slot index: Int) {
        change { removeEntries(at: index, &$0, &$1) { $0 === implementation } }
    }

    /// Whether a call of slot `index` reaches more than a default value (see `DynamicDelegate.responds(to:)`).
    func responds(_ index: Int, _ state: State) -> Bool {
        state.slots[index].entries.contains { !$0.isSpent } || state.slots[index].original != nil
            || forwardRoute(index, state)?.responds == true
    }

    /// Whether a call of `method` reaches more than a default value.
    func responds(to method: String) -> Bool {
        guard let index = try? descriptor.methodIndex(of: method) else { return false }
        return state.withLock { responds(index, $0) }
    }
}

extension SlotTable {
    /// Removes the implementation of slot `index` registered under `key`. Transparent (in an extension: a
    /// class's own methods cannot be), as ``change(_:)`` is, so that a public removal forgets abandoned
    /// calls from its own frame.
    @_transparent @discardableResult
    func removeImplementation(at index: Int, matching key: SlotKey) -> Bool {
        change { removeEntries(at: index, &$0, &$1) { $0.key == key } }
    }
}
