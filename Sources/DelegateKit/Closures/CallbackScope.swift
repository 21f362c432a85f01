import Synchronization

/// Runs `body`, keeping every ``CClosure`` and delegate made during it (on this task or thread, in
/// nested calls too) alive until `body` returns, then releasing them all together.
///
/// Swift may release an object right after its last use, which for a closure handed to C is often
/// before C is done with it: `qsort(…, closure.functionPointer())` may run with the closure already
/// gone. Inside a scope nothing made there goes before the scope ends, and nothing made there outlives
/// it unless the program keeps it (a stored property, a value returned from `body`), as Java's `Arena`
/// frees its upcalls when it closes:
///
/// ```swift
/// try withCallbackScope {
///     let compare = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
///         let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
///         return x < y ? -1 : x > y ? 1 : 0
///     }
///     qsort(&numbers, numbers.count, 4, compare.functionPointer())
/// }
/// ```
///
/// After the scope, C must not call what was made in it (unless the program kept it): in debug builds
/// such a call stops the program with the message of a call through a deinitialized closure or
/// delegate. Scopes nest; each releases what was made in it and not in an inner one.
public func withCallbackScope<T>(_ body: () throws -> T) rethrows -> T {
    let scope = CallbackScope()
    defer { scope.end() }
    return try CallbackScope.$current.withValue(scope, operation: body)
}

/// ``withCallbackScope(_:)`` for asynchronous code: what is made in `body` and in the child tasks it
/// starts lives until `body` returns.
public func withCallbackScope<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
) async rethrows -> T {
    let scope = CallbackScope()
    defer { scope.end() }
    return try await CallbackScope.$current.withValue(scope, operation: body, isolation: isolation)
}

/// What a ``withCallbackScope(_:)`` holds.
final class CallbackScope: Sendable {
    /// The innermost scope of this task (or thread, outside tasks).
    @TaskLocal static var current: CallbackScope?

    /// How many scopes are open in the process: while none is, making a closure skips the task-local
    /// lookup, a noticeable part of making a closure.
    private static let open = Atomic<Int>(0)

    private let objects = Locked<[AnyObject]>([])

    init() {
        CallbackScope.open.add(1, ordering: .relaxed)
    }

    /// Keeps `object` until the current scope, if any, ends.
    static func adopt(_ object: AnyObject) {
        // A scope opened on this thread was counted before its body could make anything here.
        guard open.load(ordering: .relaxed) != 0, let scope = current else { return }
        scope.objects.withLock { $0.append(object) }
    }

    /// Releases everything, outside the lock: deinitializers run user code (a closure's captures).
    func end() {
        CallbackScope.open.subtract(1, ordering: .relaxed)
        let released = objects.withLock { objects in
            defer { objects = [] }
            return objects
        }
        _ = consume released
    }
}
