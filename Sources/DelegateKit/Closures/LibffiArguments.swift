// libffi's form of a call, read and written from Swift: the argument array (a pointer to each argument)
// and the result buffer, for closures libffi enters and for calls of C through `ffi_call`.

/// Reads the next argument from libffi's argument array and moves past it.
@inlinable @inline(__always)
func nextArgument<T: CValue>(_ cursor: inout UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> T {
    defer { cursor += 1 }
    // libffi's argument copies are not promised to be aligned for every type (structs on the stack).
    return UnsafeRawPointer(cursor.pointee.unsafelyUnwrapped).loadUnaligned(as: T.self)
}

/// Writes a closure's result where libffi expects it, widened to a register when narrower.
@inlinable @inline(__always)
func storeResult<T: CValue>(_ value: T, to result: UnsafeMutableRawPointer, _ widening: ReturnWidening) {
    result.storeBytes(of: value, as: T.self)
    // Only types narrower than a register can need widening; for the rest the check folds away.
    if MemoryLayout<T>.size < MemoryLayout<UInt64>.size { widening.apply(to: result) }
}

/// The argument at `index` of libffi's argument array, as a `T`.
@inlinable @inline(__always)
func argument<T: CValue>(_ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ index: Int) -> T {
    UnsafeRawPointer(arguments[index].unsafelyUnwrapped).loadUnaligned(as: T.self)
}

/// Lays Swift values out the way libffi receives arguments (an array of pointers to each value), in
/// stack memory, for the duration of `body`.
@inlinable
func withArgumentArray<each A: CValue, T>(
    _ argument: repeat each A, body: (UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> T
) -> T {
    var count = 0
    var bytes = 0
    for value in repeat each argument {
        let alignment = MemoryLayout.alignment(ofValue: value)
        bytes = (bytes + alignment - 1) / alignment * alignment + MemoryLayout.size(ofValue: value)
        count += 1
    }
    return withUnsafeTemporaryAllocation(byteCount: max(bytes, 1), alignment: 16) { storage in
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(count, 1)) { pointers in
            let base = storage.baseAddress.unsafelyUnwrapped
            var offset = 0
            var index = 0
            for value in repeat each argument {
                let alignment = MemoryLayout.alignment(ofValue: value)
                offset = (offset + alignment - 1) / alignment * alignment
                (base + offset).storeBytes(of: value, as: staticType(of: value))
                pointers[index] = base + offset
                offset += MemoryLayout.size(ofValue: value)
                index += 1
            }
            return body(pointers.baseAddress.unsafelyUnwrapped)
        }
    }
}

/// Runs `body` with a zeroed buffer of at least `byteCount` bytes that libffi may write a result into:
/// two words on the stack, zeroed without a call of memset, when that is enough (every scalar; libffi
/// stores a result with moves that need no more than 8-byte alignment), else 16-aligned memory of that
/// size. Always inlined: a call of C should cost no generic dispatch for its result.
@inlinable @inline(__always)
func withResultBuffer<T>(byteCount: Int, _ body: (UnsafeMutableRawPointer) -> T) -> T {
    if byteCount <= 16 {
        var buffer: (UInt64, UInt64) = (0, 0)
        return withUnsafeMutableBytes(of: &buffer) { body($0.baseAddress.unsafelyUnwrapped) }
    }
    return withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 16) {
        let result = $0.baseAddress.unsafelyUnwrapped
        result.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        return body(result)
    }
}

/// ``withResultBuffer(byteCount:_:)`` for a result of `prepared`, at least `minimumSize` bytes long.
@inlinable @inline(__always)
func withResultBuffer<T>(
    _ prepared: PreparedSignature, minimumSize: Int = 0, _ body: (UnsafeMutableRawPointer) -> T
) -> T {
    withResultBuffer(byteCount: max(prepared.resultBufferSize, minimumSize), body)
}

/// Runs `body` with a zeroed result buffer for `prepared`, then reads the result as `R`.
@inlinable
func withResultBuffer<R: CValue>(_ prepared: PreparedSignature, returning: R.Type, _ body: (UnsafeMutableRawPointer) -> Void) -> R {
    withResultBuffer(prepared, minimumSize: MemoryLayout<R>.size) { result in
        body(result)
        // A narrow integer arrives as a whole register; on a little-endian machine its low bytes, the
        // value itself, come first.
        return UnsafeRawPointer(result).loadUnaligned(as: R.self)
    }
}

/// The bytes an argument of `size` bytes takes in a block of arguments laid out for libffi: at least a
/// register's worth, and a multiple of 16, so that every slot is aligned for any C type.
@inlinable @inline(__always)
func argumentSlotSize(_ size: Int) -> Int { (max(size, 8) + 15) / 16 * 16 }
