@testable import DelegateKit  // PreparedSignature: libffi's ffi_call, as a C caller of any signature

// A C caller of any signature, for the tests that hold two call paths to one result.

/// What a C caller gets from `function`: the result bytes libffi's `ffi_call` stores (a narrow
/// integer widened to 8 bytes, as libffi does).
func callFromC<each A: CValue>(_ function: UnsafeRawPointer, _ signature: CSignature, _ argument: repeat each A) throws -> [UInt8] {
    let prepared = try PreparedSignature.prepared(signature)
    let count = signature.returnType.widening == .none ? signature.returnType.size : 8
    var result: (UInt64, UInt64) = (0, 0)
    withArgumentArray(repeat each argument) { arguments in
        withUnsafeMutableBytes(of: &result) { prepared.call(function, result: $0.baseAddress!, arguments: arguments) }
    }
    return withUnsafeBytes(of: result) { Array($0.prefix(count)) }
}

/// The value `T` whose bytes C received.
func decode<T: CValue>(_ bytes: [UInt8], as type: T.Type) -> T {
    var storage: (UInt64, UInt64) = (0, 0)
    bytes.withUnsafeBytes { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
    return withUnsafeBytes(of: storage) { $0.loadUnaligned(as: T.self) }
}
