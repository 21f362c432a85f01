import Glibc

/// A value behind a pthread mutex, for DelegateKit's rare paths (implementing, removing, caching).
///
/// Not `Synchronization.Mutex`: on Linux that one is built on raw futexes, which ThreadSanitizer
/// cannot see, so every access it protects reads as a race and a sanitizer run could not tell a real
/// one from those. ThreadSanitizer understands pthread mutexes.
///
/// Every section is also inside the shim's fork gate, which `fork` waits for: a forked child never
/// finds one of these locks held by a thread it does not have. So a section never waits for another
/// thread's progress and never runs code of the program's (deinitializers run after it).
///
/// The value is never empty (`Locked(())`): an empty stored property lies at its object's address, where
/// the object's metadata pointer is, so ThreadSanitizer took each section's access to it for a write of
/// that word, which `withLock` reads before it takes the mutex (a race it reported once in CI, between
/// two first calls of `CFunction`s). A debug build checks it.
final class Locked<Value>: @unchecked Sendable {  // `value` is only touched with `mutex` held.
    /// Unchecked: the mutex already makes every access exclusive, and the run-time check cost more than
    /// the lock on every change.
    @exclusivity(unchecked) private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        assert(MemoryLayout<Value>.size > 0, "Locked<\(Value.self)> holds an empty value: give it one (see Locked)")
        self.value = value
        mutex = .mallocated()
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.freeMallocated()
    }

    /// Runs `body` with the value, holding the mutex.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        RetirementShim.enterForkGate()
        pthread_mutex_lock(mutex)
        defer {
            pthread_mutex_unlock(mutex)
            RetirementShim.leaveForkGate()
        }
        return try body(&value)
    }
}
