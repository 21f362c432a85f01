import DelegateKitCSQLite
import DelegateKit
import DelegateKitFixtures
import Foundation
import Glibc
import Testing

/// Something a closure captures, whose deinitialization shows the closure was freed.
final class Tracked: Sendable {
    let value: Int64
    init(_ value: Int64) { self.value = value }
}

/// Closures whose lifetime C decides (GObject Introspection's scopes), and owners reached without cycles.
@Suite(.serialized) struct LifetimeTests {
    @Test func oneShotRunsOnceFromACThreadAndIsFreedAfterwards() throws {
        let seen = LogBox()
        weak var weakTracked: Tracked?
        do {
            let tracked = Tracked(7)
            weakTracked = tracked
            let done = try CCallback.oneShot { (userData: UnsafeMutableRawPointer?, status: Int32) in
                seen.append("done \(status) \(tracked.value) \(UInt(bitPattern: userData))")
            }
            fx_start_operation(try done.functionPointer(), UnsafeMutableRawPointer(bitPattern: 0x10))
        }
        #expect(weakTracked != nil)  // no Swift owner, yet alive: the C call is still to come
        #expect(fx_complete_operations(3) == 1)
        #expect(seen.messages == ["done 3 7 16"])
        #expect(weakTracked == nil)  // released as the call returned (its code goes when another is made)
        _ = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, _: Int32) in }
    }

    @Test func aOneShotCNeverCallsIsDiscardedWithItsCaptures() throws {
        weak var weakTracked: Tracked?
        let runs = Counter()
        let done: CCallback
        do {
            let tracked = Tracked(5)
            weakTracked = tracked
            done = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, _: Int32) in runs.increment(by: Int(tracked.value)) }
        }
        fx_start_operation(try done.functionPointer(), nil)
        #expect(fx_cancel_operations() == 1)  // C dropped it uncalled, and says so
        #expect(weakTracked != nil)  // C may still have called it, as far as DelegateKit knows
        #expect(done.discard())
        #expect(weakTracked == nil)
        #expect(!done.discard())  // once
        #expect(runs.value == 0)

        // One C called releases itself; discarding it afterwards does nothing.
        let called = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, _: Int32) in runs.increment() }
        fx_start_operation(try called.functionPointer(), nil)
        #expect(fx_complete_operations(0) == 1)
        #expect(!called.discard())
        #expect(runs.value == 1)

    }

    @Test func aSecondCallOfAOneShotRunsNothing() throws {
        let runs = Counter()
        let done = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, _: Int32) in runs.increment() }
        fx_start_operation(try done.functionPointer(), nil)
        fx_start_operation(try done.functionPointer(), nil)  // a buggy C library completing twice
        #expect(fx_complete_operations(0) == 2)
        #expect(runs.value == 1)
    }

    @Test func releasedByCLivesUntilTheDestroyNotification() throws {
        weak var weakTracked: Tracked?
        do {
            let tracked = Tracked(3)
            weakTracked = tracked
            let handler = try NotifiedCallback { (value: Int64) -> Int64 in value * tracked.value }
            fx_set_handler(try handler.functionPointer(), handler.userData, handler.destroyNotify)
        }
        #expect(fx_call_handler(14) == 42)
        #expect(weakTracked != nil)
        fx_set_handler(nil, nil, nil)  // replacing the handler destroys the old one
        #expect(weakTracked == nil)
        #expect(fx_call_handler(14) == Int64.min)
    }

    @Test func sqliteFunctionReleasedThroughXDestroy() throws {
        var db: OpaquePointer?
        #expect(sqlite3_open(":memory:", &db) == SQLITE_OK)
        weak var weakTracked: Tracked?
        do {
            let factor = Tracked(3)
            weakTracked = factor
            let triple = try NotifiedCallback { (context: OpaquePointer?, count: Int32, values: UnsafeMutablePointer<OpaquePointer?>?) in
                sqlite3_result_int64(context, sqlite3_value_int64(values![0]) * factor.value)
            }
            typealias SQLFunction = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void
            #expect(try sqlite3_create_function_v2(
                db, "triple", 1, SQLITE_UTF8, triple.userData, triple.functionPointer(as: SQLFunction.self),
                nil, nil, triple.destroyNotify) == SQLITE_OK)
        }
        #expect(try query(db, "SELECT triple(14), triple(-2)") == [["42", "-6"]])
        #expect(weakTracked != nil)
        #expect(sqlite3_close(db) == SQLITE_OK)  // SQLite calls xDestroy(pApp)
        #expect(weakTracked == nil)
    }

    @Test func blockDelegateClosuresReachTheirOwnerWithoutACycle() throws {
        weak var weakStream: OwnedStream?
        let file = MemoryFile()
        do {
            let stream = try OwnedStream(text: "hello from the owner")
            weakStream = stream
            try stream.implement("read") { (me: OwnedStream, _: UnsafeMutableRawPointer?, buffer: UnsafeMutablePointer<CChar>?, size: Int) -> Int in
                me.read(into: buffer, size)
            }
            try stream.implement("close") { (me: OwnedStream, _: UnsafeMutableRawPointer?) -> Int32 in
                me.closed = true
                return file.close()
            }
            let handle = try #require(fx_fopencookie(nil, "r", stream.table))
            var line = [CChar](repeating: 0, count: 64)
            #expect(fgets(&line, 64, handle) != nil)
            #expect(String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "hello from the owner")
            fclose(handle)
            #expect(stream.closed)
        }
        #expect(file.closes.value == 1)
        #expect(weakStream == nil)  // the closures did not keep their owner alive
    }
}

/// A block delegate whose closures use the object they belong to.
final class OwnedStream: BlockDelegate {
    @Slot("read") var onRead: ((UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, Int) -> Int)?
    private var bytes: [UInt8]
    var closed = false

    init(text: String) throws {
        bytes = Array(text.utf8)
        try super.init(protocol: cookieIO)
    }

    func read(into buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int {
        let count = min(size, bytes.count)
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer!).copyMemory(from: $0.baseAddress!, byteCount: count) }
        bytes.removeFirst(count)
        return count
    }
}

struct Refused: Error, Equatable {
    let value: Int64
}
