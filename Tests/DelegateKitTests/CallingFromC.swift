@testable import DelegateKit  // PreparedSignature: libffi's ffi_call, as a C caller of any signature

// A C caller of any signature, for the tests that hold two call paths to one result.

/// What a C caller gets from `function`: the result bytes libffi's `ffi_call` stores (a narrow
/// integer widened to 8 bytes, as libffi does).
func callFromC<each A: CValue>(_ function: UnsafeRawPointer, _ signature: CSignature, _ argument: repeat each A) throws -> [UInt8] {
    let prepared = try PreparedSignature.prepared(signature)
    let count = signature.returnType.widening == .none ? signature.returnType.size : 8
    // As large as any result, a struct returned in memory included, and aligned as any.
    let result = UnsafeMutableRawPointer.allocate(byteCount: max(16, count), alignment: 16)
    defer { result.deallocate() }
    result.initializeMemory(as: UInt8.self, repeating: 0, count: max(16, count))
    withArgumentArray(repeat each argument) { arguments in
        prepared.call(function, result: result, arguments: arguments)
    }
    return Array(UnsafeRawBufferPointer(start: result, count: count))
}

/// The value `T` whose bytes C received.
func decode<T: CValue>(_ bytes: [UInt8], as type: T.Type) -> T {
    var storage = [UInt8](repeating: 0, count: max(bytes.count, MemoryLayout<T>.size))
    storage.replaceSubrange(0..<bytes.count, with: bytes)
    return storage.withUnsafeBytes { $0.loadUnaligned(as: T.self) }
}
