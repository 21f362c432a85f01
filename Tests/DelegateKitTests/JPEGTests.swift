import CJPEG
@testable import DelegateKit  // RegisterPath.withLibffiEntry
import DelegateKitExamples
import DelegateKitFixtures
import Glibc
import Testing

/// libjpeg, whose `error_exit` must never return, with the error handler a DelegateKit closure that
/// jumps back: a whole JPEG, a truncated and a corrupt one, then the delegate changed and used again.
/// Through the worked example (`JPEGDecoder`, DelegateKit's setjmp site) and through libjpeg's own
/// pattern with the setjmp in C (`fx_jpeg_decode`); on both call paths.
@Suite struct JPEGTests {
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

    static func decoder(libffi: Bool) throws -> JPEGDecoder {
        libffi ? try RegisterPath.withLibffiEntry { try JPEGDecoder() } : try JPEGDecoder()
    }

    @Test(arguments: [false, true])
    func theExampleDecodesAndReportsBadData(libffi: Bool) throws {
        let decoder = try Self.decoder(libffi: libffi)
        let image = try decoder.decode(JPEGDecoder.sample)
        #expect(image.width == 32 && image.height == 24 && image.components == 3)
        // The gradient survives compression within a few steps.
        let (x, y) = (20, 10), pixel = (y * 32 + x) * 3
        #expect(abs(Int(image.pixels[pixel]) - x * 8) <= 12 && abs(Int(image.pixels[pixel + 1]) - y * 10) <= 12)
        #expect(abs(Int(image.pixels[pixel + 2]) - 128) <= 12)

        #expect(throws: JPEGDecoder.DecodeError(message: "Premature end of JPEG file")) { try decoder.decode(Self.truncated) }
        #expect(throws: JPEGDecoder.DecodeError(message: "Unsupported JPEG data precision 0")) { try decoder.decode(Self.corrupt) }
        #expect(throws: JPEGDecoder.DecodeError(message: "Not a JPEG file: starts with 0x00 0x01")) { try decoder.decode([0, 1, 2, 3]) }
        #expect(throws: JPEGDecoder.DecodeError(message: "Premature end of JPEG file")) { try decoder.decode(Self.headerOnly) }
        // The same decoder, its jump target and its error table serve the next image.
        #expect(try decoder.decode(JPEGDecoder.sample) == image)

        // The delegate changed and used again: warnings no longer stop the decoding.
        try decoder.errors.implement(\.emit_message) { (_: j_common_ptr?, _: Int32) in }
        let lenient = try decoder.decode(Self.truncated)
        #expect(lenient.width == 32 && lenient.height == 24 && lenient.pixels != image.pixels)
        // Past the warning, running out of data before the image starts is an error of libjpeg's own.
        #expect(throws: JPEGDecoder.DecodeError(message: "Invalid JPEG file structure: missing SOS marker")) {
            try decoder.decode(Self.headerOnly)
        }
        #expect(throws: JPEGDecoder.DecodeError(message: "Unsupported JPEG data precision 0")) { try decoder.decode(Self.corrupt) }
        #expect(try decoder.decode(JPEGDecoder.sample) == image)
        #expect(try decoder.errors.waitForRemovedCalls(timeout: .seconds(10)))
    }

    @Test(arguments: [false, true])
    func libjpegsOwnPatternWithTheSetjmpInC(libffi: Bool) throws {
        func scenario() throws {
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
                #expect(decode(JPEGDecoder.sample) == (0, 32, 24))
                #expect(decode(Self.truncated).code == 2)
                #expect(decode(Self.headerOnly).code == 2)
                #expect(decode(Self.corrupt).code == 1)
            }
            // Changed: error_exit jumps with another code, warnings are let through.
            try errors.implement(\.error_exit) { (_: j_common_ptr?) in fx_jump_back(3) }
            errors.removeImplementation(for: "emit_message")  // libjpeg's own again: it counts and goes on
            try errors.implement(\.output_message) { (_: j_common_ptr?) in }  // without printing the warning
            #expect(decode(Self.corrupt).code == 3)
            #expect(decode(Self.headerOnly).code == 3)
            #expect(decode(Self.truncated) == (0, 32, 24))
            #expect(decode(JPEGDecoder.sample) == (0, 32, 24))
            #expect(try errors.waitForRemovedCalls(timeout: .seconds(10)))
        }
        if libffi { try RegisterPath.withLibffiEntry(scenario) } else { try scenario() }
    }
}
