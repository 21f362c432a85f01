import DelegateKit
import Glibc

/// glibc's qsort with a comparator that captures Swift state; qsort has no context argument.
enum SortingDemo {
    static func run() {
        print("== qsort with a capturing comparator ==")
        let priority = ["urgent": 0, "high": 1, "normal": 2, "low": 3]
        let labels = ["low", "urgent", "normal", "high", "urgent", "low"]
        // Sort positions into `labels` by the priority table the closure captures.
        do {
            let byPriority = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
                let x = priority[labels[Int(a!.load(as: Int32.self))]]!
                let y = priority[labels[Int(b!.load(as: Int32.self))]]!
                return Int32(x - y)
            }
            print("comparator signature:", byPriority.signature)
            var order = (0..<Int32(labels.count)).map { $0 }
            typealias Compare = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32
            qsort(&order, order.count, MemoryLayout<Int32>.stride, try byPriority.functionPointer(as: Compare.self))
            print("sorted:", order.map { labels[Int($0)] }.joined(separator: ", "))
        } catch {
            print("error:", error)
        }
        print()
    }
}
