import DelegateKit
import DelegateKitFixtures
import Glibc
import Synchronization

/// A `FILE *` whose bytes live in a Swift array: glibc's fopencookie with closures for its table.
enum CookieFileDemo {
    static let cookieIO = ProtocolDescriptor(name: "cookie_io_functions_t", methods: [
        MethodDescriptor(name: "read", signature: try! CSignature(parsing: "ssize_t (void *, char *, size_t)")),
        MethodDescriptor(name: "write", signature: try! CSignature(parsing: "ssize_t (void *, const char *, size_t)")),
        MethodDescriptor(name: "seek", signature: try! CSignature(parsing: "int (void *, int64_t *, int)")),
        MethodDescriptor(name: "close", signature: try! CSignature(parsing: "int (void *)"), isRequired: true),
    ])

    /// A wrapper class a library would publish: each callback is a closure property.
    final class SwiftFile: BlockDelegate {
        @Slot("read") var onRead: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int)?
        @Slot("write") var onWrite: ((UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Int)?
        @Slot("seek") var onSeek: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<Int64>?, Int32) -> Int32)?
        @Slot("close") var onClose: ((UnsafeMutableRawPointer?) -> Int32)?

        private(set) var bytes: [UInt8] = []
        private var position = 0

        init() throws {
            try super.init(protocol: CookieFileDemo.cookieIO)
            // `unowned`: the object owns its delegate and closures, so they must not own it back.
            onWrite = { [unowned self] _, buffer, count in
                print("  write(\(count) bytes)")
                bytes.replaceSubrange(position..<min(position + count, bytes.count),
                                      with: UnsafeRawBufferPointer(start: buffer, count: count))
                position += count
                return count
            }
            onRead = { [unowned self] _, buffer, count in
                let n = max(0, min(count, bytes.count - position))
                bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer!).copyMemory(from: $0.baseAddress! + position, byteCount: n) }
                position += n
                print("  read(up to \(count)) -> \(n) bytes")
                return n
            }
            onSeek = { [unowned self] _, offset, whence in
                let base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? position : bytes.count
                position = base + Int(offset!.pointee)
                offset!.pointee = Int64(position)
                print("  seek(to \(position))")
                return 0
            }
            onClose = { _ in
                print("  close()")
                return 0
            }
        }
    }

    static func run() throws {
        print("== a FILE * backed by Swift closures (fopencookie) ==")
        let file = try SwiftFile()
        guard let stream = fx_fopencookie(nil, "w+", file.table) else { return print("fopencookie failed") }
        print("fprintf from C:")
        fx_fprintf_record(stream, "answer", 42, 0.125)
        fx_fprintf_record(stream, "pi", 3, 3.14159)
        fflush(stream)
        print("Swift now holds:", String(decoding: file.bytes, as: UTF8.self).debugDescription)
        print("fseek and fgets from C:")
        fseek(stream, 0, SEEK_SET)
        var line = [CChar](repeating: 0, count: 64)
        fgets(&line, 64, stream)
        print("fgets read:", String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).debugDescription)
        fclose(stream)
        print()
    }
}
