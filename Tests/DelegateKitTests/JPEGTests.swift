import DelegateKitCJPEG
@testable import DelegateKit  // RegisterPath.withLibffiEntry
import DelegateKitExamples
import DelegateKitFixtures
import DelegateKitDocumentationExamples
import Glibc
import Testing

/// libjpeg, whose `error_exit` must never return, with the error handler a DelegateKit closure that
/// jumps back: a whole JPEG, a truncated and a corrupt one, then the delegate changed and used again.
/// Through the worked example (`JPEGDecoder`, DelegateKit's setjmp site) and through libjpeg's own
/// pattern with the setjmp in C (`fx_jpeg_decode`); on both call paths. Each runs in a child process, as
/// LeavingCallsTests' scenarios do: the frames a jump skips never release what they hold (in a debug build
/// that includes DelegateKit's generated thunks' references to the closure), which LeakSanitizer's check
/// at exit would report as the program's leak.
@Suite struct JPEGTests {
    @Test func theExampleDecodesAndReportsBadDataInAChildProcess() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(JPEGTests.theExampleDecodesAndReportsBadData)
        })
    }

    @Test func libjpegsOwnPatternWithTheSetjmpInCInAChildProcess() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(JPEGTests.libjpegsOwnPatternWithTheSetjmpInC)
        })
    }

    @Test func theDocumentationExampleInAChildProcess() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(JPEGTests.theDocumentationExample)
        })
    }

    @Test func aVoidFunctionCalledCatchingJumpsReadsLikeAnyCallInAChildProcess() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inChild(JPEGTests.aVoidFunctionCalledCatchingJumpsReadsLikeAnyCall)
        })
    }

    /// Cut inside the compressed pixels: libjpeg warns and would fill the rest with gray.
    static let truncated = Array(JPEGDecoder.sample.dropLast(60))
    /// Cut inside the headers: an error.
    static let headerOnly = Array(JPEGDecoder.sample.prefix(200))
    /// The sample with its frame header's sample precision (8) made 0.
    static let corrupt: [UInt8] = {
        var data = JPEGDecoder.sample
        let frame = (0..<data.count - 1).first { data[$0] == 0xFF && data[$0 + 1] == 0xC0 }!
        data[frame + 4] = 0
        return data
    }()


    /// `decode` throws libjpeg's `message`.
    static func checkFails(_ decoder: JPEGDecoder, _ data: [UInt8], _ message: String, line: Int = #line) {
        do {
            _ = try decoder.decode(data)
            check(false, "decoded what should fail with '\(message)'", line: line)
        } catch {
            check(error as? JPEGDecoder.DecodeError == JPEGDecoder.DecodeError(message: message), "\(error), not '\(message)'", line: line)
        }
    }

    static func theExampleDecodesAndReportsBadData(libffi: Bool) throws {
        let decoder = try JPEGDecoder()  // on the path inChild chose
        let image = try decoder.decode(JPEGDecoder.sample)
        check(image.width == 32 && image.height == 24 && image.components == 3, "\(image.width) × \(image.height)")
        // The gradient survives compression within a few steps.
        let (x, y) = (20, 10), pixel = (y * 32 + x) * 3
        check(abs(Int(image.pixels[pixel]) - x * 8) <= 12 && abs(Int(image.pixels[pixel + 1]) - y * 10) <= 12, "pixel values")
        check(abs(Int(image.pixels[pixel + 2]) - 128) <= 12, "pixel values")

        checkFails(decoder, truncated, "Premature end of JPEG file")
        checkFails(decoder, corrupt, "Unsupported JPEG data precision 0")
        checkFails(decoder, [0, 1, 2, 3], "Not a JPEG file: starts with 0x00 0x01")
        checkFails(decoder, headerOnly, "Premature end of JPEG file")
        // The same decoder, its jump target and its error table serve the next image.
        check(try decoder.decode(JPEGDecoder.sample) == image, "the next image differs")

        // The delegate changed and used again: warnings no longer stop the decoding.
        try decoder.errors.implement(\.emit_message) { (_: j_common_ptr?, _: Int32) in }
        let lenient = try decoder.decode(truncated)
        check(lenient.width == 32 && lenient.height == 24 && lenient.pixels != image.pixels, "the lenient decoding")
        // Past the warning, running out of data before the image starts is an error of libjpeg's own.
        checkFails(decoder, headerOnly, "Invalid JPEG file structure: missing SOS marker")
        checkFails(decoder, corrupt, "Unsupported JPEG data precision 0")
        check(try decoder.decode(JPEGDecoder.sample) == image, "the next image differs")
        check(try decoder.errors.waitForRemovedCalls(timeout: .seconds(10)), "removed handlers still run")
    }

    static func libjpegsOwnPatternWithTheSetjmpInC(libffi: Bool) throws {
        var standard = jpeg_error_mgr()
        jpeg_std_error(&standard)
        let errors = TypedDelegate(for: jpeg_error_mgr.self, wrapping: &standard)
        try errors.implement(\.error_exit) { (_: j_common_ptr?) in fx_jump_back(1) }
        try errors.implement(\.emit_message) { (info: j_common_ptr?, level: Int32) in
            if level < 0 { fx_jump_back(2) }  // corrupt data: a warning libjpeg would go on from
        }
        func decode(_ data: [UInt8]) -> (code: Int32, width: Int32, height: Int32) {
            var width: Int32 = 0, height: Int32 = 0
            let code = data.withUnsafeBufferPointer { fx_jpeg_decode($0.baseAddress, $0.count, errors.typedTable, &width, &height) }
            return (code, width, height)
        }
        for _ in 0..<3 {
            check(decode(JPEGDecoder.sample) == (0, 32, 24), "the sample")
            check(decode(truncated).code == 2, "the truncated JPEG")
            check(decode(headerOnly).code == 2, "the JPEG cut in its headers")
            check(decode(corrupt).code == 1, "the corrupt JPEG")
        }
        // Changed: error_exit jumps with another code, warnings are let through.
        try errors.implement(\.error_exit) { (_: j_common_ptr?) in fx_jump_back(3) }
        errors.removeImplementation(for: "emit_message")  // libjpeg's own again: it counts and goes on
        try errors.implement(\.output_message) { (_: j_common_ptr?) in }  // without printing the warning
        check(decode(corrupt).code == 3, "the corrupt JPEG, changed")
        check(decode(headerOnly).code == 3, "the JPEG cut in its headers, changed")
        check(decode(truncated) == (0, 32, 24), "the truncated JPEG, lenient")
        check(decode(JPEGDecoder.sample) == (0, 32, 24), "the sample, changed")
        check(try errors.waitForRemovedCalls(timeout: .seconds(10)), "removed handlers still run")
    }

    /// `jpeg_CreateDecompress` returns `void` and reports a wrong library version through `error_exit`:
    /// called catching jumps as any `void` function is called, with no `returning:`.
    static func aVoidFunctionCalledCatchingJumpsReadsLikeAnyCall(libffi: Bool) throws {
        let target = JumpTarget()
        var standard = jpeg_error_mgr()
        let errors = TypedDelegate(for: jpeg_error_mgr.self, wrapping: jpeg_std_error(&standard))
        try errors.implement(\.error_exit) { (info: j_common_ptr?) in
            longjmp(info!.pointee.client_data!.assumingMemoryBound(to: __jmp_buf_tag.self), 7)
        }
        let create = try CFunction(
            "jpeg_CreateDecompress", declaration: "void jpeg_CreateDecompress(struct jpeg_decompress_struct *, int, size_t)")
        let destroy = try CFunction("jpeg_destroy_decompress", declaration: "void jpeg_destroy_decompress(struct jpeg_decompress_struct *)")
        var decoder = jpeg_decompress_struct()
        decoder.err = errors.typedTable
        decoder.client_data = UnsafeMutableRawPointer(target.buffer)
        let size = MemoryLayout<jpeg_decompress_struct>.size
        try withUnsafeMutablePointer(to: &decoder) { info in
            let refused = try create.call(catchingJumpsTo: target, info, Int32(JPEG_LIB_VERSION) + 1, size)
            check({ if case .jumped(7) = refused { true } else { false } }(), "a wrong version returned: \(refused)")
            let made = try create.call(catchingJumpsTo: target, info, Int32(JPEG_LIB_VERSION), size)
            check({ if case .returned = made { true } else { false } }(), "the right version jumped: \(made)")
            try destroy.call(info)
        }
    }

    /// The README's libjpeg example (DelegateKitDocumentationExamples/Jumps.swift).
    static func theDocumentationExample(libffi: Bool) throws {
        let size = try jpegSize(of: JPEGDecoder.sample)
        check(size?.width == 32 && size?.height == 24, "\(String(describing: size))")
        check(try jpegSize(of: corrupt) == nil, "the corrupt JPEG was read")
        check(try jpegSize(of: [0, 1, 2, 3]) == nil, "a non-JPEG was read")
    }
}
