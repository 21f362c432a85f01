// The README's enum example, compiled as a user's package compiles it: here `CValue` and glibc's `VISIT`
// both come from other modules, so the conformance needs `@retroactive` (Swift 6 warns without it).
// Scripts/check-consumer-manifest.sh builds this package with warnings as errors.
import DelegateKit
import Glibc
import Synchronization

// doc:begin visit
extension VISIT: @retroactive CValue {}       // glibc's enum: `uint32_t`, from its raw value

/// The leaves of a `tsearch` tree, counted by a closure `twalk` calls with each node's `VISIT`.
public func countLeaves(of root: UnsafeRawPointer?) throws -> Int {
    let leaves = Atomic<Int>(0)
    let visit = try CClosure { (node: UnsafeRawPointer?, which: VISIT, depth: Int32) in
        if which == leaf { leaves.add(1, ordering: .relaxed) }
    }
    twalk(root, try visit.functionPointer())
    return leaves.load(ordering: .relaxed)
}
// doc:end
