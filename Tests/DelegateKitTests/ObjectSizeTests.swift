@testable import DelegateKit  // the typed thunks' shared objects
import Testing

/// The object a typed closure's forms share (one per `CClosure` and per typed implementation) fits the
/// malloc chunk its fields need. An object's allocation asks malloc for exactly its instance size, and
/// glibc serves a request of up to 56 bytes from a 64-byte chunk, one of 57 from an 80-byte chunk: a
/// byte of padding in the wrong place costs 16 bytes a closure.
@Suite struct ObjectSizeTests {
    /// A class's instance size, from its metadata (Swift's ABI, without Objective-C: the kind word, the
    /// superclass, flags and the instance address point, then the size as a 32-bit word).
    static func instanceSize(_ type: AnyClass) -> Int {
        Int(unsafeBitCast(type, to: UnsafeRawPointer.self).load(fromByteOffset: 24, as: UInt32.self))
    }

    final class Probe {
        let word: Int64 = 0
        let byte: UInt8 = 0
    }

    @Test func aTypedClosuresSharedObjectTakesAtMostFiftySixBytes() throws {
        // The header, a word and a byte: read where the size is, or this test reads nothing.
        try #require(Self.instanceSize(Probe.self) == 25)
        let types: [AnyClass] = [
            Captured0<Int32>.self,
            Captured1<Int64, Int64>.self,
            Captured2<Int64, Int64, Int64>.self,
            Captured2<Double, Double, Double>.self,
            Captured6<Int64, Int64, Int64, Int64, Int64, Int64, UInt8>.self,
            Captured8<Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64>.self,
            CapturedVoid0.self,
            CapturedVoid2<Int64, Int64>.self,
        ]
        for type in types {
            #expect(Self.instanceSize(type) <= 56, "\(type): \(Self.instanceSize(type)) bytes")
        }
    }
}
