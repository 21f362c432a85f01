// The examples of the README and the DocC catalog about calls that do not return and about waiting for
// removed closures. Each region between `// doc:begin NAME` and `// doc:end` appears verbatim in a
// ```swift block of the docs.
import DelegateKitCJPEG
import DelegateKitCPNG
import DelegateKit
import Glibc
import Synchronization

/// The README's libjpeg example: a JPEG's size read by `jpeg_read_header`, whose errors reach an
/// `error_exit` that must not return. Returns nil when libjpeg found the data bad (`data` not empty).
public func jpegSize(of data: [UInt8]) throws -> (width: UInt32, height: UInt32)? {
    precondition(!data.isEmpty, "jpeg_mem_src itself fails on empty data, before any target is armed")
    // doc:begin jump-target
    let target = JumpTarget()                     // the setjmp site Swift cannot write
    var standard = jpeg_error_mgr()
    let errors = TypedDelegate(for: jpeg_error_mgr.self, wrapping: jpeg_std_error(&standard))
    try errors.implement(\.error_exit) { (info: j_common_ptr?) in
        // Jump back to the call that failed. Capture nothing: the jump skips this frame's releases.
        longjmp(info!.pointee.client_data!.assumingMemoryBound(to: __jmp_buf_tag.self), 1)
    }
    let readHeader = try CFunction("jpeg_read_header", declaration: "int jpeg_read_header(struct jpeg_decompress_struct *, int)")

    var decoder = jpeg_decompress_struct()
    decoder.err = errors.typedTable
    jpeg_CreateDecompress(&decoder, JPEG_LIB_VERSION, MemoryLayout<jpeg_decompress_struct>.size)
    defer { jpeg_destroy_decompress(&decoder) }
    decoder.client_data = UnsafeMutableRawPointer(target.buffer)
    let outcome = try withUnsafeMutablePointer(to: &decoder) { info in
        data.withUnsafeBufferPointer { jpeg_mem_src(info, $0.baseAddress, UInt($0.count)) }
        return try readHeader.call(catchingJumpsTo: target, info, Int32(1), returning: Int32.self)
    }
    guard case .returned = outcome else { return nil }   // .jumped: libjpeg gave up on the data
    return (decoder.image_width, decoder.image_height)
    // doc:end
}

/// The README's `CallbackExit` example: `values` sorted by glibc's `qsort`, or nil when one is NaN, which
/// the comparator cannot order and leaves the sort for.
public func sortedUnlessNaN(_ values: [Double]) throws -> [Double]? {
    var values = values
    // doc:begin callback-exit
    let target = JumpTarget()
    let compare = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) throws -> Int32 in
        let (x, y) = (a!.load(as: Double.self), b!.load(as: Double.self))
        if x.isNaN || y.isNaN { throw CallbackExit.jump(to: target) }   // qsort cannot be told: leave it
        return x < y ? -1 : x > y ? 1 : 0
    }
    let qsort = try CFunction("qsort", declaration: "void qsort(void *, size_t, size_t, int (*)(const void *, const void *))")
    let outcome = try values.withUnsafeMutableBytes { bytes in
        try qsort.call(catchingJumpsTo: target, bytes.baseAddress, bytes.count / 8, 8, compare.address)
    }
    guard case .returned = outcome else { return nil }   // .jumped: a NaN stopped the sort
    // doc:end
    return values
}

/// The README's libpng example: a PNG's size read by `png_read_info` through a read function of ours, or
/// nil when libpng gave up on the data (a short read).
public func pngSize(of data: [UInt8]) throws -> (width: UInt32, height: UInt32)? {
    // doc:begin png-exit
    let target = JumpTarget()
    let pngError = try CFunction("png_error", declaration: "void png_error(struct png_struct_def *, const char *)")
    let readInfo = try CFunction("png_read_info", declaration: "void png_read_info(struct png_struct_def *, struct png_info_def *)")
    let unread = Mutex(data[...])
    let read = try CClosure { (png: OpaquePointer?, into: UnsafeMutablePointer<UInt8>?, length: Int) throws in
        let chunk = unread.withLock { unread in
            defer { unread = unread.dropFirst(length) }
            return unread.prefix(length)
        }
        guard chunk.count == length else {
            throw try CallbackExit.call(pngError, png, StaticString("short read").utf8Start)   // never returns
        }
        chunk.withUnsafeBufferPointer { into!.update(from: $0.baseAddress!, count: length) }
    }
    let error = try CClosure { (_: OpaquePointer?, _: UnsafePointer<CChar>?) throws in
        throw CallbackExit.jump(to: target)   // libpng's error function must not return: back to the call
    }
    var png = png_create_read_struct(png_get_libpng_ver(nil), nil, try error.functionPointer(as: png_error_ptr.self), nil)
    var info = png_create_info_struct(png)
    defer { png_destroy_read_struct(&png, &info, nil) }
    png_set_read_fn(png, nil, try read.functionPointer(as: png_rw_ptr.self))
    guard case .returned = try readInfo.call(catchingJumpsTo: target, png, info) else {
        return nil                            // .jumped: libpng gave up on the data
    }
    return (png_get_image_width(png, info), png_get_image_height(png, info))
    // doc:end
}

/// The wait of Lifetimes and Threads: a removed closure that uses a buffer, which is freed once no call
/// runs it any more. Returns whether the wait saw every call finish.
public func freeAfterRemoval() throws -> Bool {
    let d = DynamicDelegate(protocol: cookieIO)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
    nonisolated(unsafe) let scratch = buffer  // the closure's own: freed after the wait below
    try d.implement("read") { (cookie: UnsafeMutableRawPointer?, buf: UnsafeMutablePointer<CChar>?, n: Int) -> Int in
        let count = min(n, scratch.count)
        UnsafeMutableRawPointer(buf!).copyMemory(from: scratch.baseAddress!, byteCount: count)
        return count
    }
    // doc:begin wait-for-removed-calls
    d.removeImplementation(for: "read")                 // returns at once: a C thread may still be inside it
    guard try d.waitForRemovedCalls(timeout: .seconds(5)) else {
        return false                                     // still running: keep what it uses
    }
    buffer.deallocate()                                  // no call runs the removed closure any more
    // doc:end
    return true
}
