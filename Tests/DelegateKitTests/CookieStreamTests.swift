@testable import DelegateKit  // Locked: a lock ThreadSanitizer can see
import DelegateKitFixtures
import Glibc
import Synchronization
import Testing

@Suite struct CookieStreamTests {
    static var cookie: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0xC00C1E)! }

    /// Writes records with fprintf, seeks, reads them back with fgets and fread, closes: all from C.
    func exercise(_ table: UnsafeRawPointer, _ file: MemoryFile) throws {
        let closesBefore = file.closes.value
        let stream = try #require(fx_fopencookie(Self.cookie, "w+", table))
        #expect(fx_fprintf_record(stream, "alpha", 42, 0.5) == 21)
        #expect(fx_fprintf_record(stream, "beta", -7, 1.25) == 20)
        #expect(fflush(stream) == 0)
        #expect(file.contents == "alpha=42 ratio=0.500\nbeta=-7 ratio=1.250\n")
        #expect(file.writes.value >= 1)

        #expect(fseek(stream, 0, SEEK_SET) == 0)
        var line = [CChar](repeating: 0, count: 64)
        #expect(fgets(&line, 64, stream) != nil)
        #expect(String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "alpha=42 ratio=0.500\n")

        #expect(fseek(stream, 5, SEEK_CUR) == 0)  // skip "beta="
        var bytes = [UInt8](repeating: 0, count: 2)
        #expect(fread(&bytes, 1, 2, stream) == 2)
        #expect(String(decoding: bytes, as: UTF8.self) == "-7")
        #expect(file.reads.value >= 1)

        #expect(file.closes.value == closesBefore)
        #expect(fclose(stream) == 0)
        #expect(file.closes.value == closesBefore + 1)  // exactly once
    }

    @Test func layoutMatchesGlibc() {
        #expect(cookieIO.size == fx_cookie_io_functions_size())
        #expect(cookieIO.methods.map(\.offset) == (0...3).map { fx_cookie_io_functions_offset(Int32($0)) })
        #expect(cookieIO.methods.map(\.offset) == [0, 8, 16, 24])
    }

    @Test func fileBackedByADynamicDelegate() throws {
        let file = MemoryFile()
        let cookies = Locked<Set<UInt>>([])
        let io = DynamicDelegate(protocol: cookieIO)
        try io.implement("read") { (cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, size: Int) -> Int in
            cookies.withLock { _ = $0.insert(UInt(bitPattern: cookie)) }
            return file.read(buffer, size)
        }
        try io.implement("write") { (cookie: UnsafeMutableRawPointer?, buffer: UnsafePointer<CChar>?, size: Int) -> Int in
            cookies.withLock { _ = $0.insert(UInt(bitPattern: cookie)) }
            return file.write(buffer, size)
        }
        try io.implement("seek") { (_: UnsafeMutableRawPointer?, offset: UnsafeMutablePointer<Int64>?, whence: Int32) -> Int32 in
            file.seek(offset, whence)
        }
        try io.implement("close") { (_: UnsafeMutableRawPointer?) -> Int32 in file.close() }
        try io.validate()
        try exercise(io.table, file)
        #expect(cookies.withLock { $0 } == [0xC00C1E])
    }

    @Test func fileBackedByABlockDelegate() throws {
        let file = MemoryFile()
        let stream = try CookieStream()
        #expect(!stream.dynamicDelegate.responds(to: "read"))
        stream.onRead = { _, buffer, size in file.read(buffer, size) }
        stream.onWrite = { _, buffer, size in file.write(buffer, size) }
        stream.onSeek = { _, offset, whence in file.seek(offset, whence) }
        stream.onClose = { _ in file.close() }
        #expect(stream.dynamicDelegate.responds(to: "read"))
        #expect(stream.onClose?(nil) == 0 && file.closes.value == 1)  // the getter returns the closure
        try exercise(stream.table, file)
        #expect(file.closes.value == 2)

        // nil removes what the property set; an override added through the delegate stays on its own.
        try stream.dynamicDelegate.override("read") { (next: Next<UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int, Int>,
                                                       cookie: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, size: Int) -> Int in
            next(cookie, buffer, size)
        }
        stream.onRead = nil
        #expect(stream.dynamicDelegate.responds(to: "read"))
        stream.dynamicDelegate.removeImplementation(for: "read")
        #expect(!stream.dynamicDelegate.responds(to: "read"))
        #expect(stream.table.load(fromByteOffset: 0, as: UnsafeRawPointer?.self) == nil)
        #expect(stream.onRead == nil)
    }
}
