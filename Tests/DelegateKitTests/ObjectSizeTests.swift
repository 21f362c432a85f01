import CDelegateKitRetirement
@testable import DelegateKit  // the typed thunks' shared objects, a slot's stub
import DelegateKitFixtures
import Testing

/// The objects every closure is made of fit the malloc chunks their fields need: the object a typed
/// closure's forms share (one per `CClosure` and per typed implementation), the `CClosure` itself, a
/// slot's implementation and its stub. An object's allocation asks malloc for exactly its instance
/// size, and glibc serves a request of up to 40 bytes from a 48-byte chunk, one of 41 to 56 from a
/// 64-byte chunk: a byte of padding in the wrong place, or a word stored where it could be worked out,
/// costs 16 bytes a closure.
@Suite struct ObjectSizeTests {
    /// A class's instance size, from its metadata (Swift's ABI, without Objective-C: the kind word, the
    /// superclass, flags and the instance address point, then the size as a 32-bit word).
    static func instanceSize(_ type: AnyClass) -> Int {
        Int(unsafeBitCast(type, to: UnsafeRawPointer.self).load(fromByteOffset: 24, as: UInt32.self))
    }

    final class KnownSize {
        let word: Int64 = 0
        let byte: UInt8 = 0
    }

    /// The shared object holds the closure and its result's widening; which common shape's entry it
    /// enters by, if any, its class gives (see `ShapeEntry`).
    @Test func aTypedClosuresSharedObjectTakesAtMostFortyBytes() throws {
        // The header, a word and a byte: read where the size is, or this test reads nothing.
        try #require(Self.instanceSize(KnownSize.self) == 25)
        let types: [AnyClass] = [
            Captured0<Int32>.self,
            Captured1<Int64, Int64>.self,
            Captured2<Int64, Int64, Int64>.self,
            Captured2<Double, Double, Double>.self,
            Captured2<UnsafeRawPointer?, UnsafeRawPointer?, Int32>.self,  // a shape: the comparator's
            Captured6<Int64, Int64, Int64, Int64, Int64, Int64, UInt8>.self,
            Captured8<Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64>.self,
            CapturedVoid0.self,
            CapturedVoid2<Int64, Int64>.self,
            CapturedVoid2<UnsafeMutableRawPointer?, UnsafeMutableRawPointer?>.self,  // a shape: foreach's
        ]
        for type in types {
            #expect(Self.instanceSize(type) <= 40, "\(type): \(Self.instanceSize(type)) bytes")
        }
    }

    /// A shape's entry is still found for its types, and for no others, with the object no longer storing it.
    @Test func aSharedObjectGivesItsShapesEntry() throws {
        func address(_ entry: RegisterEntry?) -> UnsafeRawPointer? {
            entry.map { unsafeBitCast($0.integer, to: UnsafeRawPointer.self) }
        }
        // The objects typed thunks make, which work out the shape and give it them; through the base
        // class, as a closure being made asks.
        func captured<A0: CValue, A1: CValue, R: CValue>(_ body: @escaping @Sendable (A0, A1) -> R) throws -> ShapeEntry {
            var layer: TypedEntry?
            _ = try CallThunk.typed(body, layer: &layer)
            return try #require(layer)
        }
        let comparator = try captured { (_: UnsafeRawPointer?, _: UnsafeRawPointer?) -> Int32 in 0 }
        let sum = try captured { (a: Int64, _: Int64) -> Int64 in a }
        var constantLayer: TypedEntry?
        _ = try CallThunk.typed({ () -> Int32 in 0 }, layer: &constantLayer)
        let constant: ShapeEntry = try #require(constantLayer)
        // A closure returning nothing is no layer: its object made as its thunk makes it.
        let destroy: ShapeEntry = CapturedVoid1<UnsafeMutableRawPointer?>(
            { _ in }, shape: CallbackShapes.shape(UnsafeMutableRawPointer?.self, returning: Void.self))
        #expect(address(comparator.entry) == address(CallbackShapes.comparator))
        #expect(address(destroy.entry) == address(CallbackShapes.destroy))
        #expect(address(sum.entry) == nil)
        #expect(address(constant.entry) == nil)
        // The byte names each shape once: six shapes, six entries, and none for 0 or past the last.
        let entries = (1...6).compactMap { address(CallbackShapes.entry(UInt8($0))) }
        #expect(Set(entries).count == 6)
        #expect(address(CallbackShapes.entry(0)) == nil && address(CallbackShapes.entry(7)) == nil)
        #expect(comparator.shape != 0 && destroy.shape != 0 && sum.shape == 0 && constant.shape == 0)
    }

    /// A `CClosure` of a release build asks malloc for at most 88 bytes, which it serves from a 96-byte
    /// chunk: its thunk is 58 bytes (a debug build adds the epitaph's 16).
    @Test func aClosureTakesAtMostEightyEightBytesInARelease() throws {
        try #require(Self.instanceSize(KnownSize.self) == 25)
        #if DEBUG
        #expect(Self.instanceSize(CClosure.self) <= 88 + MemoryLayout<String?>.size)
        #else
        #expect(Self.instanceSize(CClosure.self) <= 88)
        #endif
        #expect(MemoryLayout<CallThunk>.size <= 58)
    }

    /// A slot's implementation asks malloc for at most 88 bytes, which it serves from a 96-byte chunk: it
    /// keeps its closure's pack form, not that form's handler (two words and a flag), in the word that
    /// holds an override's closure (the two never come together), and its key in one word (`SlotKey`,
    /// where an `AnyHashable` took five).
    @Test func anImplementationTakesAtMostEightyEightBytes() throws {
        try #require(Self.instanceSize(KnownSize.self) == 25)
        #expect(Self.instanceSize(Implementation.self) <= 88, "\(Self.instanceSize(Implementation.self)) bytes")
    }

    /// The `Registration` each `implement` and `override` returns asks malloc for at most 40 bytes, a
    /// 48-byte chunk: its method as the slot's index, not the method's name.
    @Test func aRegistrationTakesAtMostFortyBytes() throws {
        try #require(Self.instanceSize(KnownSize.self) == 25)
        #expect(Self.instanceSize(Registration.self) <= 40, "\(Self.instanceSize(Registration.self)) bytes")
    }

    /// A slot's stub holds the guard C enters it through in its own allocation, not in one of its own:
    /// a malloc and a free fewer for each slot implemented, and one chunk where two were.
    @Test func aSlotStubsGuardLivesInTheStubsOwnAllocation() throws {
        let slot = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
        slot.initialize(to: nil)
        defer { slot.deallocate() }
        let stub = try SlotStub.make(slot: slot, prepared: PreparedSignature.prepared(CSignature(.int64, [.int64, .int64])))
        let object = Unmanaged.passUnretained(stub).toOpaque()
        let guardEnd = UnsafeMutableRawPointer(stub.guardian) + MemoryLayout<cffi_guard>.size
        // Inside what malloc handed the object: a guard malloc'd apart lies outside it.
        #expect(UnsafeMutableRawPointer(stub.guardian) > object)
        #expect(guardEnd <= object + fx_malloc_usable_size(object))
        #expect(stub.guardian.pointee.slot == UnsafePointer(slot))
        #if !DEBUG
        // A release build's stub: the object's header, the code's address and handle, a flag, the guard:
        // 88 bytes, a 96-byte chunk.
        #expect(guardEnd - object <= 88)
        #endif
        withExtendedLifetime(stub) {}
    }
}
