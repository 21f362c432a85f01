import DelegateKit
import DelegateKitFixtures
import Glibc
import Synchronization
import Testing

// glibc's `VISIT` (search.h) is an imported C enum: Swift sees a struct with a `UInt32` raw value. The
// raw value gives its C type, so the conformance needs no body. An app, whose package DelegateKit is
// not part of, writes `extension VISIT: @retroactive CValue {}` (Swift 6 warns without it); inside
// DelegateKit's own package the compiler refuses `@retroactive`, since CValue is declared here.
extension VISIT: CValue {}
extension fx_kind: CValue {}

/// twalk's action: `void (*)(const void *node, VISIT which, int depth)`, as Swift imports it.
typealias TreeAction = @convention(c) (UnsafeRawPointer?, VISIT, Int32) -> Void

@Suite struct RawRepresentableCValueTests {
    /// A C enum declared `int` (as a header's typedef reads to a user) does not take the enum Swift
    /// imported with a `UInt32` raw value: the error says why and what to write instead, which works.
    @Test func anEnumDeclaredIntSaysToDeclareItUnsigned() throws {
        let next = try CFunction(address: fixture("fx_next_kind"), declaration: "fx_kind fx_next_kind(fx_kind)",
                                 typedefs: ["fx_kind": .int32], name: "fx_next_kind")
        let hint = "; `fx_kind` is a C enum Swift imports as `uint32_t` (C gives an enum with no negative constant an "
            + "unsigned type); declare it `uint32_t` (in `typedefs:`, `\"fx_kind\": .uint32`), or pass its raw value converted"
        let argument = #expect(throws: DelegateError.self) { _ = try next.call(FX_F32, returning: Int32.self) }
        #expect(argument?.description == "'fx_next_kind' has C signature `int32_t (int32_t)`, but the call has C signature "
            + "`int32_t (uint32_t)`: argument 1 is `uint32_t`, where the function takes `int32_t`\(hint)")
        let result = #expect(throws: DelegateError.self) { _ = try next.call(Int32(bitPattern: FX_F32.rawValue), returning: fx_kind.self) }
        #expect(result?.description == "'fx_next_kind' has C signature `int32_t (int32_t)`, but the call has C signature "
            + "`uint32_t (int32_t)`: the result is asked for as `uint32_t`, but the function returns `int32_t`\(hint)")

        let declaredUnsigned = try CFunction(address: fixture("fx_next_kind"), declaration: "fx_kind fx_next_kind(fx_kind)",
                                             typedefs: ["fx_kind": .uint32])
        #expect(try declaredUnsigned.call(FX_F32, returning: fx_kind.self) == FX_F64)
        #expect(try declaredUnsigned.call(FX_LD, returning: fx_kind.self) == FX_U8)
        // An `enum tag` is an `int` unless `typedefs:` says otherwise.
        #expect(try CSignature(parsing: "enum kind next(enum kind)") == CSignature(.int32, [.int32]))
        #expect(try CSignature(parsing: "enum kind next(enum kind)", typedefs: ["enum kind": .uint32]) == CSignature(.uint32, [.uint32]))
    }

    @Test func anImportedCEnumTravelsAsItsRawValue() {
        #expect(VISIT.cType == .uint32)
        #expect(VISIT.cType == UInt32.cType)
    }

    /// glibc's own tree walk calls the closure with the enum by value, and it arrives intact.
    @Test func glibcTwalkCallsAClosureTakingVISIT() throws {
        let keys: [Int32] = [40, 20, 60, 10, 30]
        let storage = UnsafeMutablePointer<Int32>.allocate(capacity: keys.count)
        defer { storage.deallocate() }
        storage.initialize(from: keys, count: keys.count)

        let compare = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
            return x < y ? -1 : x > y ? 1 : 0
        }
        var root: UnsafeMutableRawPointer?
        let comparator: __compar_fn_t = try compare.functionPointer()
        for index in keys.indices { _ = tsearch(storage + index, &root, comparator) }
        // tdestroy needs _GNU_SOURCE, which Swift's Glibc module does not define: free node by node.
        defer { for index in keys.indices { _ = tdelete(storage + index, &root, comparator) } }

        let visits = Mutex<[(key: Int32, which: UInt32, depth: Int32)]>([])
        let action = try CClosure { (node: UnsafeRawPointer?, which: VISIT, depth: Int32) in
            // A tree node starts with the pointer to its key.
            let key = node!.load(as: UnsafePointer<Int32>.self).pointee
            visits.withLock { $0.append((key, which.rawValue, depth)) }
        }
        twalk(root, try action.functionPointer(as: TreeAction.self))

        let seen = visits.withLock { $0 }
        // Every key is seen once as a leaf or three times (preorder, postorder, endorder) as an inner
        // node; `postorder` (glibc's in-order visit) lists the keys sorted.
        let inOrder = seen.filter { $0.which == postorder.rawValue || $0.which == leaf.rawValue }.map(\.key)
        #expect(inOrder == keys.sorted())
        #expect(Set(seen.map(\.which)).isSubset(of: [preorder, postorder, endorder, leaf].map(\.rawValue)))
        #expect(seen.filter { $0.which == leaf.rawValue }.count >= 2)
        #expect(seen.count == seen.filter { $0.which == leaf.rawValue }.count + 3 * seen.filter { $0.which == preorder.rawValue }.count)
        #expect(seen.first?.depth == 0)
    }

    /// A closure taking the enum's raw integer has the same C signature, but not twalk's Swift type.
    @Test func aRawIntegerIsNotTheEnumsSwiftType() throws {
        let action = try CClosure { (_: UnsafeRawPointer?, _: UInt32, _: Int32) in }
        let error = #expect(throws: DelegateError.self) { _ = try action.functionPointer(as: TreeAction.self) }
        #expect(error?.description == "CClosure.functionPointer(as:): "
            + "`@convention(c) (Swift.Optional<Swift.UnsafeRawPointer>, __C.VISIT, Swift.Int32) -> ()` does not fit the "
            + "C signature `void (void *, uint32_t, int32_t)`: its parameter 2 is `__C.VISIT`, but the closure's is `Swift.UInt32`")
    }
}
