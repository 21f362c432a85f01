import DelegateKit
import DelegateKitFixtures
import Glibc
import Testing

/// `functionPointer(as:)` checks the requested Swift type against the closure's C signature.
@Suite struct FunctionPointerTypeTests {
    typealias Comparator = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32

    func descending() throws -> CClosure {
        try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a!.load(as: Int64.self), y = b!.load(as: Int64.self)
            return x < y ? 1 : x > y ? -1 : 0
        }
    }

    @Test func aFittingTypeIsHandedOutAndGlibcCallsIt() throws {
        let compare = try descending()
        var numbers: [Int64] = [3, 1, 2]
        qsort(&numbers, numbers.count, 8, try compare.functionPointer(as: Comparator.self))
        #expect(numbers == [3, 2, 1])
        // Optional or not, and any pointer type for a pointer: C sees `void *` either way.
        let optional: Comparator? = try compare.functionPointer()
        #expect(optional != nil)
        _ = try compare.functionPointer(as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<Int64>) -> Int32).self)
    }

    @Test func anotherCSignatureIsRefusedNamingBothTypes() throws {
        let compare = try descending()
        let error = #expect(throws: DelegateError.self) {
            _ = try compare.functionPointer(as: (@convention(c) (Int64, Int64) -> Int32).self)
        }
        #expect(error == .functionTypeMismatch(
            call: "CClosure.functionPointer(as:)", signature: CSignature(.int32, [.pointer, .pointer]),
            requested: "@convention(c) (Swift.Int64, Swift.Int64) -> Swift.Int32",
            reason: "its parameter 1 is `Swift.Int64` (C type `int64_t`), but the closure's is `void *`"))
        #expect(error?.description == "CClosure.functionPointer(as:): `@convention(c) (Swift.Int64, Swift.Int64) -> Swift.Int32` "
            + "does not fit the C signature `int32_t (void *, void *)`: its parameter 1 is `Swift.Int64` (C type `int64_t`), "
            + "but the closure's is `void *`")

        let reasons = [
            (try? compare.functionPointer(as: (@convention(c) (UnsafeRawPointer?) -> Int32).self)) == nil,
            (try? compare.functionPointer(as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> UInt32).self)) == nil,
            (try? compare.functionPointer(as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Void).self)) == nil,
        ]
        #expect(reasons == [true, true, true])
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CClosure.functionPointer(as:)", signature: CSignature(.int32, [.pointer, .pointer]),
            requested: "@convention(c) (Swift.Optional<Swift.UnsafeRawPointer>) -> Swift.Int32",
            reason: "it takes 1 parameter, the closure 2")) {
            _ = try compare.functionPointer(as: (@convention(c) (UnsafeRawPointer?) -> Int32).self)
        }
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CClosure.functionPointer(as:)", signature: CSignature(.int32, [.pointer, .pointer]),
            requested: "@convention(c) (Swift.Optional<Swift.UnsafeRawPointer>, Swift.Optional<Swift.UnsafeRawPointer>) -> Swift.UInt32",
            reason: "its result is `Swift.UInt32` (C type `uint32_t`), but the closure's is `int32_t`")) {
            _ = try compare.functionPointer(as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> UInt32).self)
        }
    }

    @Test func aTypeThatIsNoCFunctionIsRefused() throws {
        let compare = try descending()
        // A plain pointer passed the old size check; a Swift closure type (two words) did not.
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CClosure.functionPointer(as:)", signature: CSignature(.int32, [.pointer, .pointer]),
            requested: "Swift.UnsafeRawPointer",
            reason: "it is not a @convention(c) function type (pass `address` where C takes a `void *`)")) {
            _ = try compare.functionPointer(as: UnsafeRawPointer.self)
        }
        #expect(throws: DelegateError.self) {
            _ = try compare.functionPointer(as: ((UnsafeRawPointer?, UnsafeRawPointer?) -> Int32).self)
        }
    }

    /// Swift imports `size_t` as `Int`, and a closure may serve it with `UInt` (the compatibility rules).
    @Test func anIntMayStandForSizeT() throws {
        let closure = try CClosure { (n: UInt) -> UInt in n }
        _ = try closure.functionPointer(as: (@convention(c) (Int) -> Int).self)
        _ = try closure.functionPointer(as: (@convention(c) (UInt) -> UInt).self)
        let signed = try CClosure { (n: Int) -> Int in n }
        #expect(throws: DelegateError.self) { _ = try signed.functionPointer(as: (@convention(c) (UInt) -> Int).self) }
    }

    /// A struct by value: the name does not give its layout, so it must be the closure's own Swift type.
    @Test func aStructByValueMustBeTheClosuresOwnType() throws {
        let add = try CClosure { (a: SPair, b: SPair) -> SPair in SPair(tag: a.tag &+ b.tag, value: a.value + b.value) }
        let function = try add.functionPointer(as: (@convention(c) (SPair, SPair) -> SPair).self)
        let sum = function(SPair(tag: 1, value: 1.5), SPair(tag: 2, value: 2.5))
        #expect(sum.tag == 3 && sum.value == 4)
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CClosure.functionPointer(as:)", signature: add.signature,
            requested: "@convention(c) (__C.SPair, __C.SLD16) -> __C.SPair",
            reason: "its parameter 2 is `__C.SLD16`, but the closure's is `__C.SPair`")) {
            _ = try add.functionPointer(as: (@convention(c) (SPair, SLD16) -> SPair).self)
        }
        // A closure made from a C signature has no Swift types to compare a struct with.
        let dynamic = try CClosure(signature: add.signature) { _ in }
        let error = #expect(throws: DelegateError.self) {
            _ = try dynamic.functionPointer(as: (@convention(c) (SPair, SPair) -> SPair).self)
        }
        #expect(error?.description.contains("its parameter 1 is `__C.SPair`, passed by value") == true)
    }

    @Test func oneShotAndNotifiedCallbacksAreCheckedToo() throws {
        let once = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, _: Int32) in }
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CCallback.functionPointer(as:)", signature: CSignature(.void, [.pointer, .int32]),
            requested: "@convention(c) (Swift.Optional<Swift.UnsafeMutableRawPointer>, Swift.Int64) -> ()",
            reason: "its parameter 2 is `Swift.Int64` (C type `int64_t`), but the closure's is `int32_t`")) {
            _ = try once.functionPointer(as: (@convention(c) (UnsafeMutableRawPointer?, Int64) -> Void).self)
        }
        // Called once, as C would, so that it is released: straight through its pointer, not through the
        // fixture's queue of operations, which LifetimeTests completes in a suite running beside this one.
        let call: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Void = try once.functionPointer()
        call(nil, 0)
    }

    /// Each way of getting a pointer out, on each type that hands one out, throws a mismatch naming the
    /// call and both types: a type that cannot be right is refused before C could call through it.
    @Test func everyPointerSpellingThrowsOnAMismatchNamingBothTypes() throws {
        let closure = try CClosure { (x: Int32) -> Int32 in x }
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CClosure.functionPointer(as:)", signature: CSignature(.int32, [.int32]),
            requested: "@convention(c) (Swift.Double) -> Swift.Int32",
            reason: "its parameter 1 is `Swift.Double` (C type `double`), but the closure's is `int32_t`")) {
            _ = try closure.functionPointer(as: (@convention(c) (Double) -> Int32).self)
        }
        #expect(throws: DelegateError.functionTypeMismatch(
            call: "CClosure.functionPointer(erasedAs:)", signature: CSignature(.int32, [.int32]),
            requested: "Swift.UnsafeRawPointer",
            reason: "it is not a @convention(c) function type (pass `address` where C takes a `void *`)")) {
            _ = try closure.functionPointer(erasedAs: UnsafeRawPointer.self)
        }
        let notified = try NotifiedCallback { (x: Int64) -> Int64 in x }
        defer { notified.release() }
        let error = #expect(throws: DelegateError.self) {
            _ = try notified.functionPointer(as: (@convention(c) (Int64) -> Int32).self)
        }
        #expect(error?.description == "NotifiedCallback.functionPointer(as:): `@convention(c) (Swift.Int64) -> Swift.Int32` "
            + "does not fit the C signature `int64_t (int64_t)`: its result is `Swift.Int32` (C type `int32_t`), "
            + "but the closure's is `int64_t`")
        let destroy = #expect(throws: DelegateError.self) {
            _ = try notified.destroyNotify(as: (@convention(c) (Int32, UnsafeMutableRawPointer?) -> Void).self)
        }
        #expect(destroy?.description == "NotifiedCallback.destroyNotify(as:): "
            + "`@convention(c) (Swift.Int32, Swift.Optional<Swift.UnsafeMutableRawPointer>) -> ()` does not fit the "
            + "C signature `void (void *)`: a destroy function must be `void (*)(void *)` or `void (*)(void *, void *)`, "
            + "a @convention(c) function type returning Void whose one or two parameters are pointers, the user data first")
    }

}
