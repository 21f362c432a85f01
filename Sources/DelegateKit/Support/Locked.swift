import Glibc

/// A value behind a pthread mutex, for DelegateKit's rare paths (implementing, removing, caching).
///
/// Not `Synchronization.Mutex`: on Linux that one is built on raw futexes, which ThreadSanitizer
/// cannot see, so every access it protects reads as a race and a sanitizer run could not tell a real
/// one from those. ThreadSanitizer understands pthread mutexes.
final class Locked<Value>: @unchecked Sendable {  // `value` is only touched with `mutex` held.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the mutex.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
