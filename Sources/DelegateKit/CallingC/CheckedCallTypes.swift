import Synchronization

/// The Swift types of a ``CFunction``'s typed calls that passed its full check, so that later calls of the
/// same types skip it.
///
/// A typed call whose Swift types all state scalar C types is checked by comparing codes, a constant once
/// specialized. Any other — a struct, an `Int` passed for a `size_t` — takes the full check
/// (``CFunction/check(_:returning:checkingResult:)``), which builds each type's C description: thousands of
/// instructions and several allocations, seven times the `ffi_call` behind it for a struct of four
/// `double`s. The check's answer depends on the types alone, so once a list of types passed it is
/// published here, and a call compares its types' identities with the lists, with no lock and no
/// allocation. Two lists are looked up (a function is called with one in practice); a list is published
/// once and never freed before the function, and at most ``capacity`` are made, after which the check
/// simply runs on every call of a list not found.
@usableFromInline
final class CheckedCallTypes: @unchecked Sendable {  // `made` changes under a lock; lists are written before they are published.
    /// Each a list's address, or 0: its length, then the identity of the result's type (0 for a call
    /// that does not check it) and of each argument's. Published with a release store, read with an acquiring load.
    @usableFromInline let latest = Atomic<UInt>(0)
    @usableFromInline let earlier = Atomic<UInt>(0)
    /// Every list made, freed with this object; only touched under ``insertion`` (or in `deinit`).
    private var made: [UnsafeMutableBufferPointer<UInt>] = []
    /// Orders every function's insertions, which are rare (a list's first call), so that a function
    /// costs no lock of its own to make; holds how many lists all functions have made (see ``Locked``
    /// on why a lock holds a value).
    private static let insertion = Locked(0)

    /// How many lists one function makes at most.
    static let capacity = 8

    @usableFromInline init() {}

    deinit {
        made.forEach { $0.deallocate() }
    }

    /// Whether a call of these types passed the check before; `result` counts only where the call
    /// checked it (`checkingResult`).
    @inlinable
    func contains<each A, R>(_ result: R.Type, checkingResult: Bool, _ arguments: repeat (each A).Type) -> Bool {
        guard latest.load(ordering: .relaxed) != 0 else { return false }
        return Self.withIdentities(R.self, checkingResult: checkingResult, repeat each arguments) { contains($0) }
    }

    /// Runs `body` with the identities of a call's types, as ``contains(_:)`` takes them, in memory on the
    /// stack.
    @inlinable
    static func withIdentities<each A, R, T>(
        _ result: R.Type, checkingResult: Bool, _ arguments: repeat (each A).Type, body: (UnsafeBufferPointer<UInt>) -> T
    ) -> T {
        var count = 1
        for _ in repeat (each A).self { count += 1 }
        return withUnsafeTemporaryAllocation(of: UInt.self, capacity: count) { identities in
            identities[0] = resultIdentity(R.self, checkingResult: checkingResult)
            var index = 1
            for argument in repeat each arguments {
                identities[index] = identity(argument)
                index += 1
            }
            return body(UnsafeBufferPointer(identities))
        }
    }

    /// Whether a call of the types `identities` names passed the check before: the result's type (0 for a
    /// call that does not check it), then each argument's (``identity(_:)``). What a fixed-arity call
    /// asks, its identities constants once specialized.
    @inlinable
    func contains(_ identities: UnsafeBufferPointer<UInt>) -> Bool {
        Self.matches(latest.load(ordering: .acquiring), identities)
            || Self.matches(earlier.load(ordering: .acquiring), identities)
    }

    /// Whether the list at `address` is `identities`.
    @inlinable
    static func matches(_ address: UInt, _ identities: UnsafeBufferPointer<UInt>) -> Bool {
        guard let list = UnsafePointer<UInt>(bitPattern: address), list[0] == identities.count + 1 else { return false }
        for index in identities.indices where list[index + 1] != identities[index] { return false }
        return true
    }

    /// A type's identity: the address of its metadata, the same for every use of the type in a process.
    @inlinable
    static func identity<T>(_ type: T.Type) -> UInt {
        UInt(bitPattern: ObjectIdentifier(type))
    }

    /// What stands for a call's result among its identities: its type's identity where the call checks it,
    /// else 0, which no type's is.
    @inlinable
    static func resultIdentity<R>(_ type: R.Type, checkingResult: Bool) -> UInt {
        checkingResult ? identity(R.self) : 0
    }

    /// Records that a call of these types passed the check.
    @usableFromInline
    func insert<each A, R>(_ result: R.Type, checkingResult: Bool, _ arguments: repeat (each A).Type) {
        Self.insertion.withLock { listsMade in
            guard made.count < Self.capacity else { return }
            listsMade += 1
            let list = Self.withIdentities(R.self, checkingResult: checkingResult, repeat each arguments) { identities in
                let list = UnsafeMutableBufferPointer<UInt>.allocate(capacity: identities.count + 1)
                list[0] = UInt(list.count)
                _ = UnsafeMutableBufferPointer(rebasing: list.dropFirst()).initialize(from: identities)
                return list
            }
            made.append(list)
            earlier.store(latest.load(ordering: .relaxed), ordering: .releasing)
            latest.store(UInt(bitPattern: list.baseAddress), ordering: .releasing)
        }
    }
}
