/// A prepared signature's call interface and result size, for calls of C: a value with no reference in
/// it, so that the closures a call nests (argument storage, result buffer) retain and release nothing.
/// Valid while its ``PreparedSignature`` lives (for ever, for those a ``CFunction`` or a key holds).
@usableFromInline
struct LibffiCall {
    @usableFromInline let cif: UnsafeMutablePointer<LibffiShim.CallInterface>
    @usableFromInline let resultBufferSize: Int

    @usableFromInline
    init(cif: UnsafeMutablePointer<LibffiShim.CallInterface>, resultBufferSize: Int) {
        self.cif = cif
        self.resultBufferSize = resultBufferSize
    }

    /// Calls `function` with `arguments` in libffi's form, and reads the result as an `R`.
    @inlinable @inline(__always)
    func call<R: CValue>(
        _ function: UnsafeRawPointer, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>, returning: R.Type
    ) -> R {
        withResultBuffer(byteCount: max(resultBufferSize, MemoryLayout<R>.size)) { result in
            LibffiShim.call(cif, function, result, arguments)
            // A narrow integer arrives as a whole register; on a little-endian machine its low bytes,
            // the value itself, come first.
            return UnsafeRawPointer(result).loadUnaligned(as: R.self)
        }
    }
}
