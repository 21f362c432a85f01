// DelegateKit's own trampoline pages exist on x86_64 Linux only (TrampolinePages.c writes x86_64 code);
// elsewhere every closure takes libffi's path and there is nothing here to test.
#if arch(x86_64)
@testable import DelegateKit
import CDelegateKitTrampolines
import Foundation
import Glibc
import Testing

/// DelegateKit's own trampoline pages (`Sources/CDelegateKitTrampolines/TrampolinePages.c`): each slot enters its entry with its
/// context through a near jump, from a page that is executable and never writable, and a freed slot is
/// handed out again. Release builds put every register trampoline there; this debug build drives the
/// pages directly, and `delegatekit-trampoline-pages`, built in release, runs the library on them.
@Suite(.serialized) struct TrampolinePagesTests {
    /// Returns its first argument plus the context's address, and twice its first double.
    static let entry: cffi_register_entry = { i0, _, _, _, _, context, d0, _, _, _, _, _, _, _ in
        cffi_registers(integer: i0 &+ UInt64(UInt(bitPattern: context)), sse: d0 * 2)
    }
    /// Another entry, which must get pages of its own.
    static let otherEntry: cffi_register_entry = { i0, _, _, _, _, _, _, _, _, _, _, _, _, _ in
        cffi_registers(integer: ~i0, sse: 0)
    }

    typealias IntegerFunction = @convention(c) (UInt64) -> UInt64

    /// The release children take the register path, also when CI runs this suite with it off.
    static let registerPath = ["DELEGATEKIT_FAST_PATH": "1"]

    struct Slot {
        let handle: UnsafeMutableRawPointer
        let code: UnsafeMutableRawPointer
    }

    func make(_ entry: cffi_register_entry, context: Int) throws -> Slot {
        var code: UnsafeMutableRawPointer?
        let handle = try #require(cffi_trampoline_create(entry, UnsafeMutableRawPointer(bitPattern: context), &code))
        return Slot(handle: handle, code: try #require(code))
    }

    func call(_ slot: Slot, _ value: UInt64) -> UInt64 {
        unsafeBitCast(slot.code, to: IntegerFunction.self)(value)
    }

    /// /proc/self/maps whole: read until its end, as a /proc file states no size (Foundation's
    /// `String(contentsOfFile:)` stops after its first read, before the end of a sanitizer's long map).
    func maps() -> String {
        let descriptor = open("/proc/self/maps", O_RDONLY)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while case let count = read(descriptor, &buffer, buffer.count), count > 0 { bytes += buffer[..<count] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The permissions /proc/self/maps gives the mapping holding `address` ("r-xp").
    func permissions(of address: UnsafeRawPointer) -> String {
        let maps = maps()
        let target = UInt(bitPattern: address)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            let range = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            if range.count == 2, range[0] <= target, target < range[1] { return String(fields[1]) }
        }
        return "unmapped"
    }

    /// The lines of /proc/self/maps around the mapping holding `address`, for a failure's message.
    func mapping(of address: UnsafeRawPointer) -> String {
        let lines = maps().split(separator: "\n")
        let target = UInt(bitPattern: address)
        let index = lines.firstIndex { line in
            let range = line.split(separator: " ")[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            return range.count == 2 && target < range[1]
        } ?? lines.endIndex
        return lines[max(lines.startIndex, index - 2)..<min(lines.endIndex, index + 3)].joined(separator: "\n")
    }

    @Test func eachSlotEntersItsEntryWithItsContextByANearJump() throws {
        // More than a page holds (256), so that several pages serve one entry.
        let slots = try (1...600).map { try make(Self.entry, context: $0 * 16) }
        defer { for slot in slots { cffi_trampoline_free(slot.handle) } }
        #expect(Set(slots.map(\.code)).count == slots.count)
        for (index, slot) in slots.enumerated() {
            #expect(call(slot, 5) == 5 + UInt64((index + 1) * 16))
            // endbr64, mov …(%rip), %r9, then jmp rel32 (0xe9) straight to the entry.
            #expect(slot.code.load(as: UInt32.self) == 0xfa1e0ff3)
            #expect(slot.code.load(fromByteOffset: 5, as: UInt8.self) == 0x8b)
            #expect(slot.code.load(fromByteOffset: 11, as: UInt8.self) == 0xe9)
            let target = Int(bitPattern: slot.code) + 16 + Int(slot.code.loadUnaligned(fromByteOffset: 12, as: Int32.self))
            #expect(target == Int(bitPattern: unsafeBitCast(Self.entry, to: UnsafeRawPointer.self)))
        }
        // Executable, never writable; the contexts beside the code are data.
        for (address, expected) in [(UnsafeRawPointer(slots[0].code), "r-xp"), (UnsafeRawPointer(slots[0].handle), "rw-p"),
                                    (UnsafeRawPointer(slots[599].code), "r-xp")] {
            let found = permissions(of: address)
            let around = mapping(of: address)
            #expect(found == expected, "\(address): \(found), in /proc/self/maps:\n\(around)")
        }
    }

    @Test func theContextCanBeSetBeforeCIsGivenTheCode() throws {
        let slot = try make(Self.entry, context: 0)
        defer { cffi_trampoline_free(slot.handle) }
        cffi_trampoline_set_context(slot.handle, UnsafeMutableRawPointer(bitPattern: 0x1000))
        #expect(call(slot, 1) == 0x1001)
    }

    @Test func aFreedSlotIsHandedOutAgainAndEntriesKeepTheirOwnPages() throws {
        let first = try make(Self.entry, context: 0x10)
        let other = try make(Self.otherEntry, context: 0)
        defer { cffi_trampoline_free(other.handle) }
        #expect(call(other, 0) == ~UInt64(0))
        // Pages are 4 KiB: slots of different entries never share one.
        #expect(UInt(bitPattern: first.code) >> 12 != UInt(bitPattern: other.code) >> 12)
        cffi_trampoline_free(first.handle)
        let again = try make(Self.entry, context: 0x20)
        defer { cffi_trampoline_free(again.handle) }
        #expect(again.code == first.code)
        #expect(call(again, 2) == 0x22)
    }

    @Test func threadsMakeAndFreeSlotsAtOnce() async throws {
        await withTaskGroup(of: Bool.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    var right = true
                    for round in 0..<500 {
                        var code: UnsafeMutableRawPointer?
                        let context = (thread * 1000 + round + 1) * 16
                        guard let handle = cffi_trampoline_create(Self.entry, UnsafeMutableRawPointer(bitPattern: context), &code),
                            let code
                        else { return false }
                        right = right && unsafeBitCast(code, to: IntegerFunction.self)(3) == UInt64(context + 3)
                        cffi_trampoline_free(handle)
                    }
                    return right
                }
            }
            for await right in group { #expect(right) }
        }
    }

    /// A release build puts every kind of register trampoline (a common shape's own entry, the shared
    /// closure entry, a dispatcher, a slot stub) in its own pages, and its forked child calls them too.
    @Test(.enabled(if: ExpectedRegisterPath.probeSucceeds, "this libffi fails the register path's probe: no closure takes the register path"))
    func aReleaseBuildRunsOnItsOwnPages() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-trampoline-pages"), ["pages"], environment: Self.registerPath)
        #expect(child.termination == .exit(0))
        let results = "comparator own: [9, 5, 3, 0, -2]\nclosure own: 42\nstacked slot own: 43, observed 1\nplain slot own: -1"
        #expect(child.output == results + "\nchild: " + results.split(separator: "\n").joined(separator: " | ") + "\nchild exited 0\n")
    }

    /// In a process that may never make memory executable (PR_SET_MDWE), no page can be made: every
    /// trampoline goes into libffi's closure memory, with the same results.
    @Test func withoutExecutableMemoryTheTrampolinesGoToLibffi() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-trampoline-pages"), ["mdwe"], environment: Self.registerPath)
        if child.output.hasPrefix("PR_SET_MDWE refused") { return }  // a kernel before 6.3
        #expect(child.termination == .exit(0))
        let results = "comparator libffi: [9, 5, 3, 0, -2]\nclosure libffi: 42\nstacked slot libffi: 43, observed 1\n"
            + "plain slot libffi: -1"
        #expect(child.output == results + "\nchild: " + results.split(separator: "\n").joined(separator: " | ") + "\nchild exited 0\n")
    }

    /// A fork while another thread makes and frees trampolines: the page lock is taken inside the fork
    /// gate, so no child finds it held by a thread it does not have, and every child makes, calls and
    /// frees one (a child that hangs is stopped by its alarm, the whole run by its own).
    @Test func aForkedChildMakesTrampolinesWhileTheParentChurns() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-trampoline-pages"), ["fork"], environment: Self.registerPath)
        #expect(child.termination == .exit(0))
        #expect(child.output == "300 of 300 children answered\n")
    }
}
#endif
