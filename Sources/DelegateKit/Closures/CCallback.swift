import Synchronization

/// A C function pointer whose closure is not owned by a Swift object: it frees itself after its first
/// call (`oneShot(_:)`), or C frees it through a destroy notification (``NotifiedCallback``).
/// GObject Introspection calls these scopes "async" and "notified".
public struct CCallback: CFunctionPointerConvertible, ClosureTypeProviding, @unchecked Sendable {  // The code it points to is kept alive as its scope says.
    /// The C signature of ``address``.
    public let signature: CSignature
    /// The C-callable code.
    public let address: UnsafeRawPointer
    /// The closure's Swift function type, for checking ``functionPointer(as:)``'s struct and enum parameters.
    let swiftType: Any.Type?

    init(signature: CSignature, address: UnsafeRawPointer, swiftType: Any.Type?) {
        self.signature = signature
        self.address = address
        self.swiftType = swiftType
    }

    /// A C function pointer that keeps its closure alive until its first call returns, then releases it:
    /// for completion callbacks, which C calls exactly once.
    ///
    /// The closure, and everything it captured, is released on the calling thread as that call returns.
    /// Only the small C-callable code stays a little longer, since C may still be executing it: it is
    /// freed when a later one-shot is made (never from inside its own call). A one-shot that C never calls
    /// keeps its closure, since C may still call it.
    ///
    /// A second call is a bug in the C code: while the code is still mapped it runs nothing and returns
    /// the default value; after it is freed, anything can happen.
    ///
    /// The closure returns a ``CValue`` type, or nothing for a C function returning `void`; throws as
    /// `CClosure.init(_:)` does.
    @inlinable
    public static func oneShot<each A: CValue, R>(_ body: @escaping @Sendable (repeat each A) -> R) throws -> CCallback {
        try OneShot.make(CallThunk.typed(anyResult: body))
    }

    /// Releases a one-shot callback that C will never call, with its code and everything its closure
    /// captured: the operation it was made for never started (`curl_multi_add_handle` failed), or was
    /// cancelled before the callback ran and C says it will not run it (`uv_cancel` returned 0 for a work
    /// request, whose work callback then never runs).
    ///
    /// Returns `true` when it released the callback; `false` when C already called it (the call releases
    /// it), or when it was discarded already.
    ///
    /// - Important: Call it only once C cannot call the callback any more: its code is freed, and a call
    ///   after that jumps into freed memory. A callback C is still running is not released (this returns
    ///   `false`), but one C calls *after* this returned `true` is a bug this cannot catch.
    @discardableResult
    public func discard() -> Bool {
        OneShot.discard(address)
    }
}

/// One-shot closures: each is kept in a list from its creation until its call has finished, then a
/// later ``make(_:)`` frees its code. What the user's closure captured goes earlier, as the call returns.
/// One that is never called stays listed (C may still call it), which leak checkers report as reachable,
/// not lost.
@usableFromInline
enum OneShot {
    /// A one-shot's state, shared by its code and the list.
    final class Entry: @unchecked Sendable {  // `body` is written before C can call, then only by the one call that fires.
        /// The user's closure, until the one call that runs it lets go of it.
        var body: CallThunk.ArrayBody?
        var closure: CClosure?
        let fired = Atomic<Bool>(false)
        /// Set as the very last step of the call: after it, nothing of the closure is touched again.
        let finished = Atomic<Bool>(false)

        init(body: @escaping CallThunk.ArrayBody) { self.body = body }
    }

    /// Every one-shot not yet freed; the next ``make(_:)`` frees those whose call has finished.
    private static let entries = Locked<[Entry]>([])

    @usableFromInline
    static func make(_ thunk: CallThunk) throws -> CCallback {
        // Free what earlier one-shots left, outside the lock (deinitializers may run user code).
        // One pass: a call may finish meanwhile, and an entry taken out of the list without being freed
        // would keep itself alive through its closure forever.
        let done = Self.entries.withLock { entries in
            var done: [Entry] = []
            entries.removeAll { entry in
                guard entry.finished.load(ordering: .acquiring) else { return false }
                done.append(entry)
                return true
            }
            return done
        }
        for entry in done { entry.closure = nil }

        let entry = Entry(body: thunk.body)
        let prepared = thunk.prepared
        let closure = try CClosure(thunk: CallThunk(prepared: prepared) { [entry] result, arguments in
            guard !entry.fired.exchange(true, ordering: .acquiringAndReleasing) else {
                return prepared.zeroResult(result)
            }
            if let body = entry.body {
                entry.body = nil  // The entry no longer keeps the closure: the call's reference is the last.
                body(result, arguments)
            }
            entry.finished.store(true, ordering: .releasing)
        }, joinsScope: false)  // its lifetime is its own: freed after its call
        entry.closure = closure
        Self.entries.withLock { $0.append(entry) }
        return CCallback(signature: closure.signature, address: closure.address, swiftType: thunk.swiftType)
    }

    /// Releases the one-shot at `address` that C never took (its registration failed), closure and code
    /// at once. Returns false when there is none, or it was called already.
    @discardableResult
    static func discard(_ address: UnsafeRawPointer) -> Bool {
        let entry = Self.entries.withLock { entries -> Entry? in
            guard let index = entries.firstIndex(where: { $0.closure?.address == address }),
                !entries[index].fired.exchange(true, ordering: .acquiringAndReleasing)
            else { return nil }
            return entries.remove(at: index)
        }
        guard let entry else { return false }
        entry.body = nil
        entry.closure = nil
        return true
    }
}
