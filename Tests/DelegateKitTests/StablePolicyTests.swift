import DelegateKit
import DelegateKitFixtures
import Glibc
import Testing

/// fopencookie copies its table when the FILE is made, so only `.stable` slots see later changes.
@Suite struct StablePolicyTests {
    func openStream(_ io: DynamicDelegate, _ file: MemoryFile) throws -> OpaquePointer {
        try io.implement("close") { (_: UnsafeMutableRawPointer?) -> Int32 in file.close() }
        return try #require(fx_fopencookie(nil, "w", io.table)).withMemoryRebound(to: FILE.self, capacity: 1) { OpaquePointer($0) }
    }

    @Test func writeImplementedAfterTheFileExistsReachesAStableCopy() throws {
        let file = MemoryFile()
        let io = DynamicDelegate(protocol: cookieIO)
        try io.setPolicy(.stable)
        #expect(!io.responds(to: "write"))  // nothing implements it yet...
        #expect(io.table.load(fromByteOffset: 8, as: UnsafeRawPointer?.self) != nil)  // ...but the slot is never NULL
        let stream = UnsafeMutablePointer<FILE>(try openStream(io, file))

        try io.implement("write") { (_: UnsafeMutableRawPointer?, buffer: UnsafePointer<CChar>?, size: Int) -> Int in
            file.write(buffer, size)
        }
        #expect(fx_fprintf_record(stream, "late", 1, 2) == 19)
        #expect(fflush(stream) == 0)
        #expect(file.contents == "late=1 ratio=2.000\n")

        // Removing reaches the copy too: writes now get the default value, 0 bytes, which stdio reports.
        io.removeImplementation(for: "write")
        fx_fprintf_record(stream, "lost", 2, 3)
        #expect(fflush(stream) != 0)
        #expect(file.contents == "late=1 ratio=2.000\n")
        fclose(stream)
        #expect(file.closes.value == 1)
    }

    @Test func withoutStableTheCopyKeepsNull() throws {
        let file = MemoryFile()
        let io = DynamicDelegate(protocol: cookieIO)
        let stream = UnsafeMutablePointer<FILE>(try openStream(io, file))
        try io.implement("write") { (_: UnsafeMutableRawPointer?, buffer: UnsafePointer<CChar>?, size: Int) -> Int in
            file.write(buffer, size)
        }
        fx_fprintf_record(stream, "late", 1, 2)
        fflush(stream)
        #expect(file.contents == "")  // glibc's copy still has NULL for write
        fclose(stream)
    }
}
