import DelegateKitBenchmarkSupport
import DelegateKit
import Foundation

/// The changes a long-lived delegate goes through: each cycle adds something to slot "f" (which has a
/// plain implementation below) and removes it again, calling the slot once in between.
enum ChurnKind: String, CaseIterable {
    case implementRemove = "`implement` + `removeImplementation`"
    case overrideRemove = "`override` + `Registration.remove()`"
    case observeCancel = "`observe` + `cancel()`"

    /// The name `--measure-churn` takes.
    var key: String {
        switch self {
        case .implementRemove: return "implement"
        case .overrideRemove: return "override"
        case .observeCancel: return "observe"
        }
    }
}

/// What one cycle costs: time, and the memory it leaves behind (resident or heap growth over the run).
struct ChurnCost {
    let kind: ChurnKind
    let nanoseconds: Double
    let bytesKeptPerCycle: Double
}

/// A delegate of the `int64(int64,int64)` signature, its slot implemented, for `cycle` to churn.
func churnDelegate() throws -> DynamicDelegate {
    let delegate = DynamicDelegate(protocol: BenchSignature.i64.descriptor)
    try implement(delegate, .i64, key: "base")
    return delegate
}

/// One cycle of `kind` on `delegate`, with one call of the slot, loaded afresh as C would, while the
/// addition is in place.
func cycle(_ kind: ChurnKind, _ delegate: DynamicDelegate) throws {
    func callSlot() {
        _ = delegate.table.load(as: (@convention(c) (Int64, Int64) -> Int64)?.self)?(1, 2)
    }
    switch kind {
    case .implementRemove:
        try implement(delegate, .i64, key: "churn")
        callSlot()
        delegate.removeImplementation(for: "f", key: "churn")
    case .overrideRemove:
        let registration = try delegate.override("f") { (next: Next<Int64, Int64, Int64>, a: Int64, b: Int64) -> Int64 in next(a, b) }
        callSlot()
        registration.remove()
    case .observeCancel:
        let token = try delegate.observe("f", .after) { (_: Int64, _: Int64) in }
        callSlot()
        token.cancel()
    }
}

extension Benchmark {
    /// Times `cycles` cycles of each kind on one delegate after a warm-up, and what they leave behind.
    static func measureChurn(cycles: Int) throws -> [ChurnCost] {
        try ChurnKind.allCases.map { kind in
            let delegate = try churnDelegate()
            for _ in 0..<max(cycles / 10, 1) { try cycle(kind, delegate) }
            let before = MemoryUse.now()
            let start = bench_now()
            for _ in 0..<cycles { try cycle(kind, delegate) }
            let nanoseconds = Double(bench_now() - start) / Double(cycles)
            return ChurnCost(kind: kind, nanoseconds: nanoseconds, bytesKeptPerCycle: MemoryUse.now().bytes(since: before) / Double(cycles))
        }
    }

    /// `--measure-churn KIND N`: N cycles of one kind (for callgrind).
    static func measureChurnOne(_ arguments: [String]) {
        guard arguments.count == 2, let kind = ChurnKind.allCases.first(where: { $0.key == arguments[0] }),
            let n = Int(arguments[1]), let delegate = try? churnDelegate()
        else { exit(2) }
        for _ in 0..<n { try? cycle(kind, delegate) }
    }
}
