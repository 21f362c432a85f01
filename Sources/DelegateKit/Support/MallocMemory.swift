import Glibc

// `UnsafeMutablePointer.allocate` on Linux asks the runtime for "default" alignment, which it serves with
// `posix_memalign` rather than `malloc`: about twice the instructions for the same chunk. What a closure
// or a slot makes each time it is created (a stub's guard, a record C reads) is allocated here instead.
extension UnsafeMutablePointer {
    /// Uninitialized memory for `capacity` values from `malloc`, for a `Pointee` whose alignment `malloc`
    /// already gives (16 bytes on the platforms DelegateKit supports); free it with ``freeMallocated()``.
    @usableFromInline
    static func mallocated(capacity: Int = 1) -> UnsafeMutablePointer<Pointee> {
        assert(MemoryLayout<Pointee>.alignment <= 16)
        guard let memory = malloc(MemoryLayout<Pointee>.stride * capacity) else {
            fatalError("DelegateKit: out of memory")
        }
        return memory.bindMemory(to: Pointee.self, capacity: capacity)
    }

    /// Frees memory ``mallocated(capacity:)`` returned, whose values are deinitialized.
    @usableFromInline
    func freeMallocated() {
        free(self)
    }
}
