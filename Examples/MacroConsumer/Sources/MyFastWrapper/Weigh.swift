// A user's module with the `Macros` trait on: `#CClosure` expands here, where the closure's types are known.
import DelegateKitMacros

/// A C function pointer of type `double (*)(int64_t, double)` that scales by `scale`.
public func weigher(scale: Double) throws -> CClosure {
    try #CClosure { (count: Int64, mass: Double) -> Double in Double(count) * mass * scale }
}
