import DelegateKit
import DelegateKitFixtures
import Testing

/// A typed table handed to a C function that writes into it, as CPython's `PyType_Ready` writes into the
/// `PyTypeObject` it readies: `fx_type_ready` sets data members and fills the NULL methods with the base
/// type's. What C wrote stays until the delegate changes that very slot (Delegates.md, "Tables C writes
/// into"). Serialized: the base type's `finalize` counts its calls in one global.
@Suite(.serialized) struct ReadiedTableTests {
    /// The function C finds in `member`'s slot.
    func slot<Member>(_ type: TypedDelegate<fx_type>, _ member: KeyPath<fx_type, Member>) -> UnsafeRawPointer? {
        UnsafeRawPointer(type.typedTable).load(fromByteOffset: MemoryLayout<fx_type>.offset(of: member)!, as: UnsafeRawPointer?.self)
    }

    /// A delegate that implements `hash` (42, counted) and `setup` (twice the argument), readied by C.
    func readiedType(hashes: Counter) throws -> TypedDelegate<fx_type> {
        let type = TypedDelegate(for: fx_type.self)
        try type.implement(\.hash) { (_: UnsafeMutableRawPointer?) -> Int64 in
            hashes.increment()
            return 42
        }
        try type.implement(\.setup) { (_: UnsafeMutableRawPointer?, argument: Int64) -> Int32 in Int32(argument) * 2 }
        #expect(fx_type_ready(type.typedTable) == 2)  // weight and finalize were NULL
        return type
    }

    /// The data members hold what readying wrote.
    func expectCsDataMembers(_ type: TypedDelegate<fx_type>, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(type.typedTable.pointee.flags == UInt64(FX_TYPE_READY), sourceLocation: sourceLocation)
        #expect(type.typedTable.pointee.basicsize == Int64(FX_TYPE_BASE_SIZE), sourceLocation: sourceLocation)
    }

    @Test func whatCWritesStaysUntilTheDelegateChangesThatSlot() throws {
        let hashes = Counter()
        let type = try readiedType(hashes: hashes)
        let finalized = fx_type_base_finalized()

        // C filled the NULL slots with its own methods and left the implemented ones alone.
        expectCsDataMembers(type)
        #expect(slot(type, \.weight) == fx_type_base_method(2))
        #expect(slot(type, \.finalize) == fx_type_base_method(3))
        #expect(slot(type, \.hash) != nil && slot(type, \.hash) != fx_type_base_method(0))
        // Called from C, the implemented slots run the closures, the filled ones C's methods.
        #expect(fx_type_call_hash(type.typedTable, nil) == 42 && hashes.value == 1)
        #expect(fx_type_call_setup(type.typedTable, nil, 5) == 10)
        #expect(fx_type_call_weight(type.typedTable, nil) == FX_TYPE_BASE_WEIGHT)
        #expect(fx_type_call_finalize(type.typedTable, nil) == 1 && fx_type_base_finalized() == finalized + 1)
        // The delegate does not know C's methods are there: it never reads the table.
        #expect(!type.responds(to: "weight") && !type.responds(to: "finalize"))
        let weight = try type.implementation(for: "weight", as: ((UnsafeMutableRawPointer?) -> Double).self)
        #expect(weight?(nil) == FX_TYPE_BASE_WEIGHT)  // it calls what C would

        // Changing one slot rewrites that slot only.
        try type.implement(\.hash) { (_: UnsafeMutableRawPointer?) -> Int64 in 43 }
        #expect(fx_type_call_hash(type.typedTable, nil) == 43)
        #expect(fx_type_call_setup(type.typedTable, nil, 5) == 10)
        #expect(slot(type, \.weight) == fx_type_base_method(2) && slot(type, \.finalize) == fx_type_base_method(3))
        expectCsDataMembers(type)

        // Removing leaves what the delegate holds below, here nothing: NULL, not C's method (C never
        // wrote into this slot, and would not have been read if it had).
        #expect(type.removeImplementation(for: try type.methodName(of: \.hash)))
        #expect(slot(type, \.hash) == nil)
        #expect(fx_type_call_hash(type.typedTable, nil) == .min)
        #expect(slot(type, \.weight) == fx_type_base_method(2) && slot(type, \.finalize) == fx_type_base_method(3))

        // Implementing a slot C filled replaces C's method; removing it again does not bring it back.
        try type.implement(\.weight) { (_: UnsafeMutableRawPointer?) -> Double in 2 }
        #expect(fx_type_call_weight(type.typedTable, nil) == 2)
        #expect(type.removeImplementation(for: try type.methodName(of: \.weight)))
        #expect(slot(type, \.weight) == nil)
        #expect(fx_type_call_weight(type.typedTable, nil) == -1)

        // A removal that finds nothing to remove changes nothing, and the other slots kept theirs throughout.
        #expect(!type.removeImplementation(for: try type.methodName(of: \.finalize)))
        #expect(slot(type, \.finalize) == fx_type_base_method(3))
        #expect(fx_type_call_setup(type.typedTable, nil, 7) == 14)
        expectCsDataMembers(type)
        #expect(hashes.value == 1)
    }

    /// An override of a slot C filled finds nothing below: the delegate never read C's method.
    @Test func anOverrideOfASlotCFilledDoesNotReachCsMethod() throws {
        let type = try readiedType(hashes: Counter())
        try type.override(\.weight) { (next: Next<UnsafeMutableRawPointer?, Double>, object: UnsafeMutableRawPointer?) -> Double in
            next.isAvailable ? next(object) * 10 : -5
        }
        #expect(fx_type_call_weight(type.typedTable, nil) == -5)
    }

    /// A change of every slot (a policy for all of them, a forwarding target, `observeAll`) rewrites
    /// every slot, those C filled included.
    @Test func aChangeOfEverySlotRewritesWhatCWrote() throws {
        let observed = try readiedType(hashes: Counter())
        let all = observed.observeAll { _ in }
        // An observer does not make an empty slot respond: NULL, as for a removal.
        #expect(slot(observed, \.weight) == nil && slot(observed, \.finalize) == nil)
        #expect(fx_type_call_hash(observed.typedTable, nil) == 42)
        all.cancel()
        expectCsDataMembers(observed)

        let stable = try readiedType(hashes: Counter())
        let finalized = fx_type_base_finalized()
        try stable.setPolicy(.stable)
        // The dispatcher, which finds nothing to run: the default value, and C's finalize is not called.
        #expect(slot(stable, \.weight) != nil && slot(stable, \.weight) != fx_type_base_method(2))
        #expect(fx_type_call_weight(stable.typedTable, nil) == 0)
        #expect(fx_type_call_finalize(stable.typedTable, nil) == 1 && fx_type_base_finalized() == finalized)
        #expect(fx_type_call_hash(stable.typedTable, nil) == 42)
        expectCsDataMembers(stable)
    }

    /// What C must not do: write into a slot the delegate implements. C's function runs instead of the
    /// closure until the delegate's next change of that slot, which writes the delegate's function back.
    @Test func cOverwritingAnImplementedSlotLastsUntilTheDelegatesNextChangeOfIt() throws {
        let hashes = Counter()
        let type = try readiedType(hashes: hashes)
        fx_type_inherit(type.typedTable, 0)
        #expect(fx_type_call_hash(type.typedTable, nil) == Int64(FX_TYPE_BASE_HASH))
        #expect(type.responds(to: "hash") && hashes.value == 0)  // the delegate still holds its closure
        try type.implement(\.setup) { (_: UnsafeMutableRawPointer?, argument: Int64) -> Int32 in Int32(argument) }
        #expect(fx_type_call_hash(type.typedTable, nil) == Int64(FX_TYPE_BASE_HASH))  // another slot's change
        try type.override(\.hash) { (next: Next<UnsafeMutableRawPointer?, Int64>, object: UnsafeMutableRawPointer?) -> Int64 in
            next(object) + 1
        }
        #expect(fx_type_call_hash(type.typedTable, nil) == 43 && hashes.value == 1)
    }

    /// The way to keep C's methods below the closures: let C write first, then fill the table in place.
    /// The delegate reads the slots when it is made, so overrides reach C's methods through `Next` and
    /// removals put them back.
    @Test func aTableFilledAfterCWroteKeepsCsMethodsBelow() throws {
        let storage = UnsafeMutablePointer<fx_type>.allocate(capacity: 1)
        storage.initialize(to: fx_type())
        defer { storage.deallocate() }
        #expect(fx_type_ready(storage) == 4)
        let type = TypedDelegate(for: fx_type.self, filling: storage)
        #expect(type.responds(to: "weight"))
        try type.override(\.weight) { (next: Next<UnsafeMutableRawPointer?, Double>, object: UnsafeMutableRawPointer?) -> Double in
            next(object) * 10
        }
        #expect(fx_type_call_weight(storage, nil) == FX_TYPE_BASE_WEIGHT * 10)
        #expect(type.removeImplementation(for: try type.methodName(of: \.weight)))
        #expect(storage.pointee.weight.map { unsafeBitCast($0, to: UnsafeRawPointer.self) } == fx_type_base_method(2))
        #expect(storage.pointee.flags == UInt64(FX_TYPE_READY))
        withExtendedLifetime(type) {}
    }
}
