import DelegateKit
import DelegateKitFixtures
import Glibc
import Testing

/// A callback passed to a C function through a `CFunction`: a `CClosure`, a `CFunction` or a
/// `@convention(c)` value as a pointer argument, in the typed and the run-time forms, with glibc's
/// `qsort` and a fixture that keeps the handler it is given and calls it later.
@Suite struct FunctionPointerArgumentTests {
    static let qsortDeclaration = "void qsort(void *, size_t, size_t, int (*)(const void *, const void *))"

    /// Descending, so that a sort that did not call it (or called something else) shows.
    static func descending() throws -> CClosure {
        try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a.unsafelyUnwrapped.load(as: Int32.self), y = b.unsafelyUnwrapped.load(as: Int32.self)
            return x < y ? 1 : x > y ? -1 : 0
        }
    }

    static let ascending: @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32 = { a, b in
        let x = a.unsafelyUnwrapped.load(as: Int32.self), y = b.unsafelyUnwrapped.load(as: Int32.self)
        return x < y ? -1 : x > y ? 1 : 0
    }

    @Test func aClosureSortsThroughTheTypedCall() throws {
        let qsort = try CFunction("qsort", declaration: Self.qsortDeclaration)
        var numbers: [Int32] = [3, 9, -4, 7, 0, 12]
        try numbers.withUnsafeMutableBytes { buffer in
            try qsort.call(buffer.baseAddress, buffer.count / 4, MemoryLayout<Int32>.stride, try Self.descending())
        }
        #expect(numbers == [12, 9, 7, 3, 0, -4])
    }

    @Test func aConventionCFunctionSortsThroughTheTypedCall() throws {
        let qsort = try CFunction("qsort", declaration: Self.qsortDeclaration)
        var numbers: [Int32] = [3, 9, -4, 7, 0, 12]
        try numbers.withUnsafeMutableBytes { buffer in
            try qsort.call(buffer.baseAddress, buffer.count / 4, MemoryLayout<Int32>.stride, Self.ascending)
        }
        #expect(numbers == [-4, 0, 3, 7, 9, 12])
    }

    @Test func bothSortThroughTheRunTimeCall() throws {
        let qsort = try CFunction("qsort", declaration: Self.qsortDeclaration)
        var numbers: [Int32] = [5, -1, 8, 2]
        try numbers.withUnsafeMutableBytes { buffer in
            let base = UInt(bitPattern: buffer.baseAddress)
            _ = try qsort.call([.pointer(base), .unsigned(4), .unsigned(4), .function(try Self.descending())])
            #expect(buffer.load(as: Int32.self) == 8)
            _ = try qsort.call([.pointer(base), .unsigned(4), .unsigned(4), .function(Self.ascending)])
        }
        #expect(numbers == [-1, 2, 5, 8])
    }

    /// The fixture keeps the handler and calls it afterwards: the typed call passed the closure's address
    /// (a `CFunction`'s, a `@convention(c)` value's, NULL for a nil optional), and a result came back too.
    @Test func aKeptHandlerIsTheAddressPassed() throws {
        let setHandler = try CFunction(
            address: unsafeBitCast(fx_set_handler as @convention(c) (
                (@convention(c) (Int64) -> Int64)?, UnsafeMutableRawPointer?, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
            ) -> Void, to: UnsafeRawPointer.self),
            declaration: "void (int64_t (*)(int64_t), void *, void (*)(void *))", name: "fx_set_handler")
        defer { fx_clear_handler() }
        let triple = try CClosure { (value: Int64) -> Int64 in value * 3 }
        try setHandler.call(triple, UnsafeMutableRawPointer?.none, UnsafeRawPointer?.none)
        #expect(fx_call_handler(14) == 42)

        let labs = try CFunction("labs", declaration: "long labs(long)")
        try setHandler.call(labs, UnsafeMutableRawPointer?.none, UnsafeRawPointer?.none)
        #expect(fx_call_handler(-8) == 8)

        let negate: @convention(c) (Int64) -> Int64 = { -$0 }
        try setHandler.call(negate, UnsafeMutableRawPointer?.none, UnsafeRawPointer?.none)
        #expect(fx_call_handler(5) == -5)

        let none: (@convention(c) (Int64) -> Int64)? = nil
        try setHandler.call(none, UnsafeMutableRawPointer?.none, UnsafeRawPointer?.none)
        #expect(fx_call_handler(5) == Int64.min, "a nil handler: the fixture answers INT64_MIN when it has none")
        try setHandler.call(triple, UnsafeMutableRawPointer?.none, UnsafeRawPointer?.none)
        try setHandler.call(CClosure?.none, UnsafeMutableRawPointer?.none, UnsafeRawPointer?.none)
        #expect(fx_call_handler(5) == Int64.min, "a nil closure is NULL")
        #expect(try setHandler.call([.function(negate), .pointer(0), .pointer(0)]) == .bytes([]))
        #expect(fx_call_handler(6) == -6)
    }

    @Test func aValueWithoutACAddressIsRefusedNamingBothSignatures() throws {
        let qsort = try CFunction("qsort", declaration: Self.qsortDeclaration)
        let swiftClosure: (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32 = { _, _ in 0 }
        var numbers: [Int32] = [2, 1]
        let error = #expect(throws: DelegateError.self) {
            try numbers.withUnsafeMutableBytes { buffer in
                try qsort.call(buffer.baseAddress, 2, 4, swiftClosure)
            }
        }
        #expect(error?.description == "'qsort' has C signature `void (void *, size_t, size_t, void *)`, but the call "
            + "has C signature `void (void *, int64_t, int64_t, void)`: argument 4 is a "
            + "`(Swift.Optional<Swift.UnsafeRawPointer>, Swift.Optional<Swift.UnsafeRawPointer>) -> Swift.Int32`, "
            + "which has no C type; pass a CValue, or for a function pointer a CClosure, a CFunction or a "
            + "@convention(c) function")
        #expect(numbers == [2, 1])

        let runTime = #expect(throws: DelegateError.self) { try CDynamicValue.function("strcmp") }
        #expect(runTime?.description == "CDynamicValue.function(_:): a `Swift.String` is not a C function pointer; "
            + "pass a CClosure (make one from a Swift closure), a CFunction or a @convention(c) function")
    }

    /// A closure goes where the signature takes a pointer, nowhere else.
    @Test func aClosureWhereAnIntegerGoesIsAMismatch() throws {
        let labs = try CFunction("labs", declaration: "long labs(long)")
        let closure = try Self.descending()
        #expect(throws: DelegateError.self) { try labs.call(closure, returning: Int.self) }
        #expect(throws: DelegateError.self) { try labs.call([.function(closure)]) }
    }
}
