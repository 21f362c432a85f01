@testable import DelegateKit
import Testing

/// One case of the closure-spelling matrix (`Scripts/spelling-matrix.py`, which writes the cases into
/// `SpellingMatrix/` and type-checks each on its own in CI): a closure written one ordinary way, handed to
/// one entry point.
struct SpellingCase: Sendable, CustomTestStringConvertible {
    let entryPoint: String
    let shape: String
    let spelling: String
    /// The C signature the closure must get: the shape's, or `void` with its parameters for a stream.
    let expected: String
    /// Makes the closure and hands it over to one of these, as the case says; returns the signature it got.
    let run: @Sendable (SpellingProbe, DynamicDelegate, TypedDelegate<SpellingTable>, SpellingSlots) async throws -> CSignature

    var testDescription: String { "\(entryPoint), `\(shape)`, \(spelling)" }
}

@Suite struct SpellingMatrixTests {
    /// Every case compiles (or this file would not), gets the C signature of its shape (a closure whose
    /// result type Swift inferred otherwise would get another, or be refused by the method), and a
    /// `CClosure` or `NotifiedCallback` of a common shape enters that shape's own register entry however
    /// it was written.
    @Test(arguments: spellingMatrix)
    func everySpellingGetsItsShapesSignature(_ spellingCase: SpellingCase) async throws {
        let signature = try await spellingCase.run(
            SpellingProbe(), DynamicDelegate(protocol: spellingDescriptor), TypedDelegate(for: SpellingTable.self), SpellingSlots())
        #expect(signature == (try CSignature(parsing: spellingCase.expected)))
    }

    /// What the README says to watch: a closure that states no result type and returns only literals
    /// gets Swift's default literal type, `Int` (`int64_t`), whatever C shape it was meant for; a method
    /// of another signature refuses it.
    @Test func aClosureReturningOnlyLiteralsGetsSwiftsDefaultLiteralType() throws {
        let closure = try CClosure { (p: UnsafeMutableRawPointer?) in
            if p == nil { return 0 }
            return 1
        }
        #expect(closure.signature == CSignature(.int64, [.pointer]))
        let delegate = DynamicDelegate(protocol: spellingDescriptor)
        let error = #expect(throws: DelegateError.self) {
            try delegate.implement("context") { (p: UnsafeMutableRawPointer?) in
                if p == nil { return 0 }
                return 1
            }
        }
        #expect(error == .signatureMismatch(
            method: "context", protocol: "spelling_table", expected: CSignature(.int32, [.pointer]), actual: CSignature(.int64, [.pointer])))
        try delegate.implement("context") { (p: UnsafeMutableRawPointer?) -> Int32 in
            if p == nil { return 0 }
            return 1
        }
    }

    /// The matrix covers what it says: every entry point, and the six shapes with an entry of their own;
    /// the last fixed arities (seven and eight parameters) for every entry point; the variadic shapes for
    /// the two entry points that take variadic closures (each spelling, and for the one that returns a
    /// value, a closure returning only a literal).
    @Test func theMatrixCoversEveryEntryPointAndShape() {
        #expect(Set(spellingMatrix.map(\.entryPoint)).count == 16)
        #expect(Set(spellingMatrix.map(\.shape)).count == 14)
        for shape in ["double (double, double, double, double, double, double, double)", "void (void *, int, int, int, int, int, int, int)"] {
            #expect(Set(spellingMatrix.filter { $0.shape == shape }.map(\.entryPoint)).count == 16, "\(shape)")
        }
        let variadic = spellingMatrix.filter { $0.shape.hasSuffix("...)") }
        #expect(Set(variadic.map(\.entryPoint)) == ["CClosure", "implement by name"])
        #expect(variadic.count == 2 * 2 * 8 + 2)
        #expect(Set(spellingMatrix.map(\.spelling)).count == 9)
        #expect(spellingMatrix.count > 1_000)
    }
}
