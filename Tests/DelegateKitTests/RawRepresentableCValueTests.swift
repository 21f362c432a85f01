import DelegateKit
import Glibc
import Synchronization
import Testing

// glibc's `VISIT` (search.h) is an imported C enum: Swift sees a struct with a `UInt32` raw value. The
// raw value gives its C type, so the conformance needs no body. An app, whose package DelegateKit is
// not part of, writes `extension VISIT: @retroactive CValue {}` (Swift 6 warns without it); inside
// DelegateKit's own package the compiler refuses `@retroactive`, since CValue is declared here.
extension VISIT: CValue {}

/// twalk's action: `void (*)(const void *node, VISIT which, int depth)`, as Swift imports it.
typealias TreeAction = @convention(c) (UnsafeRawPointer?, VISIT, Int32) -> Void

@Suite struct RawRepresentableCValueTests {
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
        for index in keys.indices { _ = tsearch(storage + index, &root, compare.functionPointer()) }
        // tdestroy needs _GNU_SOURCE, which Swift's Glibc module does not define: free node by node.
        defer { for index in keys.indices { _ = tdelete(storage + index, &root, compare.functionPointer()) } }

        let visits = Mutex<[(key: Int32, which: UInt32, depth: Int32)]>([])
        let action = try CClosure { (node: UnsafeRawPointer?, which: VISIT, depth: Int32) in
            // A tree node starts with the pointer to its key.
            let key = node!.load(as: UnsafePointer<Int32>.self).pointee
            visits.withLock { $0.append((key, which.rawValue, depth)) }
        }
        twalk(root, action.functionPointer(as: TreeAction.self))

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
        let error = #expect(throws: DelegateError.self) { _ = try action.checkedFunctionPointer(as: TreeAction.self) }
        #expect(error?.description == "CClosure.checkedFunctionPointer(as:): "
            + "`@convention(c) (Swift.Optional<Swift.UnsafeRawPointer>, __C.VISIT, Swift.Int32) -> ()` does not fit the "
            + "closure's C signature `void (void *, uint32_t, int32_t)`: its parameter 2 is `__C.VISIT`, but the closure's is `Swift.UInt32`")
    }
}
