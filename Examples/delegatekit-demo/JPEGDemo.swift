import DelegateKit
import DelegateKitExamples
import DelegateKitCJPEG

/// `swift run delegatekit-demo jpeg`: libjpeg, whose error handler must never return, with the handler a
/// Swift closure that jumps back to DelegateKit's `setjmp` site (`JPEGDecoder`).
enum JPEGDemo {
    static func run() {
        print("== libjpeg: an error handler that never returns ==")
        do {
            let decoder = try JPEGDecoder()
            let image = try decoder.decode(JPEGDecoder.sample)
            let middle = ((image.height / 2) * image.width + image.width / 2) * image.components
            print("decoded \(image.width) × \(image.height), \(image.components) components; "
                + "the middle pixel is \(image.pixels[middle..<middle + image.components].map(String.init).joined(separator: ", "))")
            let bad: [(String, [UInt8])] = [
                ("cut short", Array(JPEGDecoder.sample.dropLast(60))),
                ("cut inside its headers", Array(JPEGDecoder.sample.prefix(200))),
                ("not a JPEG", Array("GIF89a".utf8)),
            ]
            for (name, data) in bad {
                do {
                    _ = try decoder.decode(data)
                    print("\(name): decoded?")
                } catch {
                    // error_exit formatted libjpeg's message and jumped back: the decoder threw it.
                    print("\(name): \(error)")
                }
            }
            // Every call that jumped away is forgotten: the error handler can change at once.
            try decoder.errors.implement(\.emit_message) { (_: j_common_ptr?, _: Int32) in }
            let lenient = try decoder.decode(Array(JPEGDecoder.sample.dropLast(60)))
            print("with warnings let through, the short one decodes: \(lenient.width) × \(lenient.height), gray below the cut")
            print("removed handlers still running: none (\(try decoder.errors.waitForRemovedCalls(timeout: .seconds(1))))")
        } catch {
            print("the JPEG demo failed: \(error)")
        }
        print()
    }
}
