@testable import DelegateKit  // RegisterPath.withLibffiEntry: both call paths in one process
import DelegateKitCLua
import DelegateKitCPNG
import DelegateKitDocumentationExamples
import DelegateKitFixtures
import Foundation
import Glibc
import Synchronization
import Testing

/// The objects the closures below capture and make.
private let touched = Census()

/// What libpng and Lua do to a callback that must not return: `png_error` and `lua_error` `longjmp` to
/// the library's own `setjmp` site. Closures that leave by a ``CallbackExit`` release every capture, on
/// both call paths, for a ``CClosure`` and for a slot's implementation; and the memory a process uses
/// stays flat over 10,000 of them (checked in a child process of its own, where no other test allocates).
@Suite(.serialized) struct LibraryExitTests {
    /// What divides the counts: ThreadSanitizer's handling of a `longjmp` from code it did not instrument
    /// (Lua's, libpng's) makes each exit about 400 times slower (128 s for the 20,000 Lua calls); under
    /// AddressSanitizer, `DELEGATEKIT_CHURN_SCALE` says (as for the churn tests).
    static let scale = underThreadSanitizer ? 100 : max(1, Int(ProcessInfo.processInfo.environment["DELEGATEKIT_CHURN_SCALE"] ?? "") ?? 1)

    /// Runs `body` on each call path, checking afterwards that it left nothing it made alive.
    private static func onBothPaths(_ body: () throws -> Void) throws {
        for libffi in [false, true] {
            if libffi { try RegisterPath.withLibffiEntry(body) } else { try body() }
            #expect(touched.alive == 0, "objects left alive (libffi path: \(libffi))")
        }
    }

    // MARK: Lua

    private static let luaError = try! CFunction("lua_error", declaration: "int lua_error(void *)")

    /// A Lua state, whose scripts call a C function by Lua's `pcall`.
    private final class LuaState {
        let lua = luaL_newstate()!

        init() { luaL_openlibs(lua) }

        deinit { lua_close(lua) }

        /// Calls `function` by `pcall` with each of `values`; returns how many calls failed with the
        /// error `odd <value>`, checking that the others returned `offset` + the value.
        func pcalls(_ function: lua_CFunction, _ values: Range<Int>, offset: Int) -> Int {
            lua_pushcclosure(lua, function, 0)
            lua_setglobal(lua, "f")
            let script = """
                local failed = 0
                for i = \(values.lowerBound), \(values.upperBound - 1) do
                  local ok, result = pcall(f, i)
                  if not ok and result == "odd " .. i then failed = failed + 1 end
                  if ok and result ~= \(offset) + i then error("wrong result " .. tostring(result)) end
                end
                collectgarbage()
                return failed
                """
            defer { lua_settop(lua, 0) }
            guard luaL_loadstring(lua, script) == LUA_OK, lua_pcallk(lua, 0, 1, 0, 0, nil) == LUA_OK else {
                Issue.record("Lua failed: \(String(cString: lua_tolstring(lua, -1, nil)))")
                return 0
            }
            return Int(lua_tointegerx(lua, -1, nil))
        }
    }

    /// Lua's C function: returns `captured`'s value plus its argument, and fails by `lua_error` for an
    /// odd argument, having touched `captured` and made an object of its own.
    private static func luaBody(_ lua: OpaquePointer?, _ captured: Census.Member) throws -> Int32 {
        let argument = Int(lua_tointegerx(lua, 1, nil))
        let made = [captured, touched.member(Int64(argument))]  // released only if this frame unwinds
        if argument % 2 == 1 {
            lua_pushstring(lua, "odd \(argument)")
            throw try CallbackExit.call(luaError, lua)
        }
        lua_pushinteger(lua, made[0].value + made[1].value)
        return 1
    }

    /// `count` calls from Lua, half of them failing, of a new capturing closure every 100 calls, or of
    /// `function` for them all; returns how many failed as they should.
    private static func luaErrors(_ count: Int, in state: LuaState = LuaState(), by function: CClosure? = nil) throws -> Int {
        var failed = 0
        for batch in stride(from: 0, to: count, by: 100) {
            let captured = touched.member(Int64(function == nil ? batch : 0))
            let closure = try function ?? CClosure { (lua: OpaquePointer?) throws -> Int32 in try luaBody(lua, captured) }
            failed += state.pcalls(try closure.functionPointer(as: lua_CFunction.self), batch..<batch + 100, offset: Int(captured.value))
        }
        return failed
    }

    @Test func luaErrorsFromClosuresReleaseEveryCapture() throws {
        try Self.onBothPaths {
            let failed = try Self.luaErrors(20_000 / Self.scale)
            #expect(failed == 10_000 / Self.scale)
        }
    }

    /// A slot's implementation as Lua's C function: the fixture's `start` has Lua's `lua_CFunction` shape,
    /// `int (*)(void *)`.
    @Test func luaErrorsFromASlotReleaseEveryCapture() throws {
        try Self.onBothPaths {
            let delegate = DynamicDelegate(protocol: pluginProtocol)
            let state = LuaState()
            var failed = 0
            for batch in stride(from: 0, to: 20_000 / Self.scale, by: 100) {
                let captured = touched.member(Int64(batch))
                try delegate.implement("start") { (lua: UnsafeMutableRawPointer?) throws -> Int32 in
                    try Self.luaBody(OpaquePointer(lua), captured)
                }
                let start = table(delegate).pointee.start
                failed += state.pcalls(unsafeBitCast(start, to: lua_CFunction.self), batch..<batch + 100, offset: batch)
            }
            #expect(failed == 10_000 / Self.scale)
            delegate.removeImplementation(for: "start")
        }
    }

    // MARK: libpng

    /// A 16 × 16 grey PNG, written by libpng.
    private static let png: [UInt8] = {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = 16
        image.height = 16
        image.format = UInt32(PNG_FORMAT_GRAY)
        let pixels = (0..<256).map { UInt8($0) }
        var size: png_alloc_size_t = 0
        _ = png_image_write_to_memory(&image, nil, &size, 0, pixels, 0, nil)
        var bytes = [UInt8](repeating: 0, count: Int(size))
        _ = png_image_write_to_memory(&image, &bytes, &size, 0, pixels, 0, nil)
        return Array(bytes.prefix(Int(size)))
    }()

    /// Reads a PNG's header with libpng, through a read function that captures and makes objects and
    /// leaves a short read by `png_error`, and an error function that leaves by a jump back to the call.
    private final class PNGReader: @unchecked Sendable {  // used by one thread at a time
        let target = JumpTarget()
        let readInfo = try! CFunction("png_read_info", declaration: "void png_read_info(void *, void *)")
        let pngError = try! CFunction("png_error", declaration: "void png_error(void *, const char *)")
        var data: [UInt8] = []
        var offset = 0
        let own = touched.member(0)
        var read: CClosure!
        var error: CClosure!

        init() throws {
            read = try CClosure { [unowned self] (png: OpaquePointer?, into: UnsafeMutablePointer<UInt8>?, length: Int) throws in
                let made = [self.own, touched.member(Int64(length))]
                guard self.data.count - self.offset >= length else {
                    throw try CallbackExit.call(self.pngError, png, StaticString("short read").utf8Start)
                }
                self.data.withUnsafeBufferPointer { bytes in into!.update(from: bytes.baseAddress! + self.offset, count: length) }
                self.offset += length
                withExtendedLifetime(made) {}
            }
            error = try CClosure { [target] (_: OpaquePointer?, _: UnsafePointer<CChar>?) throws in
                throw CallbackExit.jump(to: target)
            }
        }

        /// The PNG's size as `png_read_info` reads it from `data`, or nil when libpng gave up on it.
        func size(of data: [UInt8]) throws -> (width: UInt32, height: UInt32)? {
            (self.data, offset) = (data, 0)
            var png = png_create_read_struct(png_get_libpng_ver(nil), nil, try error.functionPointer(as: png_error_ptr.self), nil)
            var info = png_create_info_struct(png)
            defer { png_destroy_read_struct(&png, &info, nil) }
            png_set_read_fn(png, nil, try read.functionPointer(as: png_rw_ptr.self))
            guard case .returned = try readInfo.call(catchingJumpsTo: target, png, info) else { return nil }
            return (png_get_image_width(png, info), png_get_image_height(png, info))
        }
    }

    /// `count` reads of the PNG, all but one in 40 cut short before its first image data, by `reader` or
    /// else a new reader each (new closures); returns how many libpng gave up on.
    private static func pngReads(_ count: Int, by reader: PNGReader? = nil) throws -> Int {
        var failed = 0
        for index in 0..<count {
            let data = Array(png.prefix(index % 40 == 0 ? png.count : index % 40))
            if let size = try (reader ?? PNGReader()).size(of: data) {
                #expect(size.width == 16 && size.height == 16)
            } else {
                failed += 1
            }
        }
        return failed
    }

    @Test func pngErrorsFromClosuresReleaseEveryCapture() throws {
        #expect(Self.png.count > 40)
        try Self.onBothPaths {
            let reads = 10_000 / Self.scale
            let failed = try Self.pngReads(reads)
            #expect(failed == reads - (reads + 39) / 40)
        }
    }

    @Test func theReadmePNGExampleReadsAndGivesUp() throws {
        try Self.onBothPaths {
            let size = try pngSize(of: Self.png)
            #expect(size?.width == 16 && size?.height == 16)
            for length in [0, 5, 8, 20, 33, 40] { #expect(try pngSize(of: Array(Self.png.prefix(length))) == nil) }
        }
    }

    // MARK: Memory

    /// 10,000 exits per path (5,000 `lua_error`s and 5,000 `png_error`s, each followed by a jump), after
    /// 2,000 to settle: the bytes malloc holds stay within 64 KiB, where what each exit skipped would leak
    /// at least 100 bytes. The same closures make every exit: a debug build keeps the code of the last
    /// 32,768 closures freed (to catch calls through stale pointers), which new ones would measure instead.
    @Test(.disabled(if: ProcessInfo.processInfo.environment["DELEGATEKIT_SANITIZER"] != nil, "a sanitizer's allocator is not glibc's"))
    func memoryStaysFlatOverTenThousandExits() async throws {
        await #expect(processExitsWith: .success) {
            for libffi in [false, true] {
                let run = {
                    let reader = try PNGReader()
                    let state = LuaState()
                    let captured = touched.member(0)
                    let function = try CClosure { (lua: OpaquePointer?) throws -> Int32 in try LibraryExitTests.luaBody(lua, captured) }
                    _ = try LibraryExitTests.luaErrors(2_000, in: state, by: function)
                    _ = try LibraryExitTests.pngReads(1_000, by: reader)
                    let before = fx_malloc_bytes_in_use()
                    _ = try LibraryExitTests.luaErrors(10_000, in: state, by: function)
                    _ = try LibraryExitTests.pngReads(5_000, by: reader)
                    if fx_malloc_bytes_in_use() > before + 64 << 10 { exit(1) }
                }
                if libffi { try RegisterPath.withLibffiEntry(run) } else { try run() }
            }
        }
    }
}
