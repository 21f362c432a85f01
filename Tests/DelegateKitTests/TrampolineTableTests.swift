@testable import DelegateKit
import CDelegateKitTrampolines
import DelegateKitFixtures
import Foundation
import Glibc
import Testing

/// DelegateKit's trampoline table (`CFFIShim/Trampolines/`): slots mapped read+execute from this
/// binary beside their read+write data words, each entering its entry with its context; freed slots handed
/// out again and stopping a late caller; every kind of closure on it, in a release build too, under
/// `PR_SET_MDWE` and across `fork`; and no writable+executable mapping anywhere.
@Suite struct TrampolineTableTests {
    typealias IntegerFunction = @convention(c) (UInt64) -> UInt64

    /// The entry of the register slots made here: returns its first argument plus the context's address,
    /// read where a register slot puts it, the sixth integer argument register (r9, x5).
    static let entry: @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeMutableRawPointer?) -> UInt64 = {
        i0, _, _, _, _, context in i0 &+ UInt64(UInt(bitPattern: context))
    }

    /// The release children take the register path, also when CI runs this suite with it off.
    static let registerPath = ["DELEGATEKIT_FAST_PATH": "1"]

    struct Slot {
        let handle: UnsafeMutableRawPointer
        let code: UnsafeMutableRawPointer
    }

    /// A register slot entering ``entry`` with `context`, or nil when none could be made: how every test
    /// here makes one, those in child processes too (whose bodies capture nothing, so they cannot call
    /// ``make(context:)``).
    static func slot(context: Int) -> Slot? {
        var code: UnsafeMutableRawPointer?
        guard let handle = cffi_trampoline_create(
            Int32(CFFI_TRAMPOLINE_REGISTERS), unsafeBitCast(entry, to: UnsafeRawPointer.self),
            UnsafeMutableRawPointer(bitPattern: context), &code), let code
        else { return nil }
        return Slot(handle: handle, code: code)
    }

    func make(context: Int) throws -> Slot { try #require(Self.slot(context: context)) }

    /// This test binary's path, which the table's code mappings name.
    static let executable: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }()

    /// The permissions and file of the mapping holding `address`.
    static func mapping(of address: UnsafeRawPointer) -> (permissions: String, file: String) {
        var permissions = [CChar](repeating: 0, count: 5)
        var path = [CChar](repeating: 0, count: 4096)
        guard fx_mapping_of(address, &permissions, &path, path.count) == 0 else { return ("unmapped", "") }
        func text(_ chars: [CChar]) -> String { String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return (text(permissions), text(path))
    }

    /// The writable+executable mappings of this process: their count and lines.
    static func writableExecutable() -> (count: Int32, lines: String) {
        var lines = [CChar](repeating: 0, count: 16384)
        let count = fx_writable_executable_mappings(&lines, lines.count)
        return (count, String(decoding: lines.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    @Test func slotsAreMappedFromThisBinaryBesideTheirData() throws {
        // More than one mapping holds (1,279 register slots each).
        let slots = try (1...2500).map { try make(context: $0 * 16) }
        defer { for slot in slots { cffi_trampoline_free(slot.handle) } }
        #expect(Set(slots.map(\.code)).count == slots.count)
        for slot in [slots[0], slots[1500], slots[2499]] {
            #expect(fx_code_kind(slot.code) == 1)
            let code = Self.mapping(of: slot.code), data = Self.mapping(of: slot.handle)
            #expect(code.permissions == "r-xp" && code.file == Self.executable, "\(code)")
            #expect(data.permissions == "rw-p" && data.file.isEmpty, "\(data)")
        }
        for (index, slot) in slots.enumerated() {
            #expect(unsafeBitCast(slot.code, to: IntegerFunction.self)(5) == 5 + UInt64((index + 1) * 16))
        }
    }

    /// A slot's data words are two words, 16 bytes, where its code takes 32: slots handed out one after
    /// another from a mapping's unused ones have code 32 bytes apart and words 16 bytes apart (each
    /// slot's code loads from its own displacement), and every call reads its own slot's words. In a
    /// child process, so that no test beside it takes slots in between.
    @Test func aSlotsDataWordsTakeSixteenBytes() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            var problems: [String] = []
            var slots: [Slot] = []
            for index in 1...64 {
                guard let slot = TrampolineTableTests.slot(context: index * 16) else { problems.append("no slot"); break }
                slots.append(slot)
            }
            // Pairs made one after the other within one mapping (a slot freed before may come first).
            let neighbours = zip(slots, slots.dropFirst()).filter { $1.code - $0.code == 32 }
            if neighbours.count < 32 { problems.append("only \(neighbours.count) of 63 pairs are neighbours") }
            for (first, second) in neighbours where second.handle - first.handle != 16 {
                problems.append("words \(second.handle - first.handle) bytes apart")
            }
            for (index, slot) in slots.enumerated() {
                let value = unsafeBitCast(slot.code, to: IntegerFunction.self)(3)
                if value != 3 + UInt64((index + 1) * 16) { problems.append("slot \(index) answered \(value)") }
            }
            for slot in slots { cffi_trampoline_free(slot.handle) }
            for problem in problems { _ = "words: \(problem)\n".withCString { write(2, $0, strlen($0)) } }
            exit(0)  // the problems are read from standard error: an exit code would hide them
        }
        let problems = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            .split(separator: "\n").filter { $0.hasPrefix("words: ") }
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The slot freed last is the next one handed out, with its new context. In a child process: in this
    /// one a test running beside it may take the freed slot first (one did, under AddressSanitizer).
    @Test func aFreedSlotIsHandedOutAgainWithItsNewContext() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            var problems: [String] = []
            let first = TrampolineTableTests.slot(context: 0x10)
            cffi_trampoline_free(first?.handle)
            let again = TrampolineTableTests.slot(context: 0x20)
            if again == nil || again?.code != first?.code {
                problems.append("handed out \(String(describing: again?.code)), not the freed \(String(describing: first?.code))")
            }
            if let handle = again?.handle, let code = again?.code {
                if cffi_trampoline_context(handle) != UnsafeMutableRawPointer(bitPattern: 0x20) {
                    problems.append("context \(String(describing: cffi_trampoline_context(handle))), not 0x20")
                }
                cffi_trampoline_set_context(handle, UnsafeMutableRawPointer(bitPattern: 0x1000))
                let value = unsafeBitCast(code, to: IntegerFunction.self)(1)
                if value != 0x1001 { problems.append("the call returned \(value), not 0x1001") }
                cffi_trampoline_free(handle)
            }
            for problem in problems { _ = "freed slot: \(problem)\n".withCString { write(2, $0, strlen($0)) } }
            exit(0)  // the problems are read from standard error: an exit code would hide them
        }
        // The child's standard error holds more than its own lines; its own start with the marker.
        let problems = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            .split(separator: "\n").filter { $0.hasPrefix("freed slot: ") }
        #expect(problems.isEmpty, "\(problems)")
    }

    /// A call through a slot after it was freed stops with a message, in every build.
    @Test func aCallThroughAFreedSlotStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let slot = TrampolineTableTests.slot(context: 0)
            cffi_trampoline_free(slot?.handle)
            _ = unsafeBitCast(slot?.code, to: IntegerFunction.self)(1)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("DelegateKit: C called a closure after it was freed"), "\(stderr)")
    }

    /// A burst of slots, all freed, gives back the memory of every mapping it took but one: their data
    /// words become a read-only view of the retired words (so a late call still stops with the message),
    /// and the next burst uses those mappings again instead of mapping more. In a child process, so that
    /// no other test holds a slot in the burst's mappings.
    @Test func aBurstOfSlotsGivesItsMemoryBackAndTheNextUsesItsMappings() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            var problems: [String] = []
            let perMapping = Int(cffi_trampoline_slots_per_mapping(Int32(CFFI_TRAMPOLINE_REGISTERS))), count = 4 * perMapping + 1
            func burst(_ base: Int) -> [Slot] {
                var slots: [Slot] = []
                slots.reserveCapacity(count)
                for index in 0..<count {
                    guard let slot = TrampolineTableTests.slot(context: (base + index) * 16) else { problems.append("no slot \(index)"); break }
                    slots.append(slot)
                }
                for (index, slot) in slots.enumerated() where unsafeBitCast(slot.code, to: IntegerFunction.self)(7) != UInt64((base + index) * 16 + 7) {
                    problems.append("slot \(index) of the burst from \(base) returned a wrong value")
                }
                return slots
            }
            func mappings() -> (count: Int, retired: Int) {
                var count = 0, retired = 0
                cffi_trampoline_mappings(&count, &retired)
                return (count, retired)
            }
            let start = residentBytes()
            var slots = burst(1)
            let peak = residentBytes(), made = mappings()
            if made.count < 5 || made.retired != 0 { problems.append("after the burst: \(made)") }
            for slot in slots { cffi_trampoline_free(slot.handle) }
            cffi_trampoline_return_kept()  // the few this thread kept to hand out again
            let after = mappings(), resident = residentBytes()
            // Every mapping but the one kept empty; each had its register slots' four words written. (A
            // sanitizer's shadow of the remapped words grows as they are given back: not measured there.)
            if after != (made.count, made.count - 1) { problems.append("after freeing them: \(after), made \(made)") }
            let sanitized = ProcessInfo.processInfo.environment["DELEGATEKIT_SANITIZER", default: ""] != ""
            if !sanitized && peak - resident < (made.count - 1) * perMapping * 4 * MemoryLayout<UInt>.size * 9 / 10 {
                problems.append("resident memory: \(start) at the start, \(peak) at the peak, \(resident) after")
            }
            // The first mapping emptied is the one kept; the last slot's was emptied after it.
            let last = slots[slots.count - 1]
            let retiredWords = TrampolineTableTests.mapping(of: last.handle), code = TrampolineTableTests.mapping(of: last.code)
            if retiredWords.permissions != "r--s" || !retiredWords.file.contains("delegatekit-retired-slots") {
                problems.append("the last slot's words, retired: \(retiredWords)")
            }
            if code.permissions != "r-xp" { problems.append("the last slot's code, retired: \(code)") }
            slots = burst(100_000)
            if mappings() != (made.count, 0) { problems.append("after the second burst: \(mappings()), made \(made)") }
            for slot in slots { cffi_trampoline_free(slot.handle) }
            let (writableExecutable, lines) = TrampolineTableTests.writableExecutable()
            if writableExecutable != 0 { problems.append("writable+executable: \(lines)") }
            for problem in problems { _ = "burst: \(problem)\n".withCString { write(2, $0, strlen($0)) } }
            exit(0)  // the problems are read from standard error: an exit code would hide them
        }
        let problems = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            .split(separator: "\n").filter { $0.hasPrefix("burst: ") }
        #expect(result != nil && problems.isEmpty, "\(problems)")
    }

    /// A thread keeps a few of the slots it frees, to hand out again without the lock, and hands them back
    /// to their mappings as it exits: a burst made and freed on a thread that then exits leaves every
    /// mapping it took but one retired, and no slot held. In a child process, as above.
    @Test func aThreadHandsTheSlotsItKeptBackAsItExits() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let live = cffi_trampolines_live()
            var thread = pthread_t()
            let started = pthread_create(&thread, nil, { _ in
                let count = 3 * Int(cffi_trampoline_slots_per_mapping(Int32(CFFI_TRAMPOLINE_REGISTERS)))
                var handles: [UnsafeMutableRawPointer] = []
                for _ in 0..<count {
                    guard let slot = TrampolineTableTests.slot(context: 0) else { break }
                    handles.append(slot.handle)
                }
                for handle in handles { cffi_trampoline_free(handle) }
                return nil
            }, nil)
            var count = 0, retired = 0
            if started == 0 { pthread_join(thread, nil) }
            cffi_trampoline_mappings(&count, &retired)
            let held = cffi_trampolines_live() - live
            let report = started == 0 && count >= 3 && retired == count - 1 && held == 0
                ? "handed back\n" : "started \(started), mappings \(count), retired \(retired), slots held \(held)\n"
            _ = report.withCString { write(2, $0, strlen($0)) }
            exit(0)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("handed back\n"), "\(stderr)")
    }

    /// A call through a slot of a mapping retired after a burst stops with the message a freed slot's
    /// call does: the retired words say so.
    @Test func aCallThroughARetiredSlotStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var codes: [UnsafeMutableRawPointer] = [], handles: [UnsafeMutableRawPointer] = []
            for _ in 0..<(3 * Int(cffi_trampoline_slots_per_mapping(Int32(CFFI_TRAMPOLINE_REGISTERS)))) {
                guard let slot = TrampolineTableTests.slot(context: 0) else { exit(0) }
                codes.append(slot.code)
                handles.append(slot.handle)
            }
            for handle in handles { cffi_trampoline_free(handle) }
            cffi_trampoline_return_kept()
            var count = 0, retired = 0
            cffi_trampoline_mappings(&count, &retired)
            // The first mapping emptied is the one kept; the last slot's was emptied after it.
            guard retired > 0, TrampolineTableTests.mapping(of: handles[handles.count - 1]).permissions == "r--s" else { exit(0) }
            _ = unsafeBitCast(codes[codes.count - 1], to: IntegerFunction.self)(1)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("DelegateKit: C called a closure after it was freed"), "\(stderr)")
    }

    /// A buried slot stops with its own message, whatever kind it is and whatever the caller passed.
    @Test func aCallThroughABuriedSlotStopsWithItsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let closure = try RegisterPath.withLibffiEntry { try CClosure { (a: Int64, b: Int64) -> Int64 in a + b } }
            #expect(fx_code_kind(closure.address) == 2)
            var code: UnsafeMutableRawPointer?
            let handle = cffi_trampoline_create(
                Int32(CFFI_TRAMPOLINE_STATIC_CHAIN), unsafeBitCast(TrampolineTableTests.entry, to: UnsafeRawPointer.self), nil, &code)
            cffi_trampoline_bury(handle, strdup("buried: the chain slot's own message"))  // lives as long as the slot
            _ = fx_call_i64(code, 1, 2)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("buried: the chain slot's own message"), "\(stderr)")
    }

    @Test func threadsMakeAndFreeSlotsAtOnce() async throws {
        await withTaskGroup(of: Bool.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    var right = true
                    for round in 0..<2000 {
                        let context = (thread * 10000 + round + 1) * 16
                        guard let slot = Self.slot(context: context) else { return false }
                        right = right && unsafeBitCast(slot.code, to: IntegerFunction.self)(3) == UInt64(context + 3)
                        cffi_trampoline_free(slot.handle)
                    }
                    return right
                }
            }
            for await right in group { #expect(right) }
        }
    }

    /// Closures of every kind, on the path this run takes (CI runs the suite on both), leave this process
    /// without a writable+executable mapping: their code is the table's, libffi's path included.
    @Test func noMappingIsWritableAndExecutable() throws {
        let add = try CClosure { (a: Int64, b: Int64) -> Int64 in a + b }
        let slow = try RegisterPath.withLibffiEntry { try CClosure { (a: Int64, b: Int64) -> Int64 in a - b } }
        let many = try CClosure(signature: CSignature(.double, Array(repeating: .double, count: 10))) { _ in }
        let logger = try CClosure { (_: UnsafeMutableRawPointer?, _: UnsafePointer<CChar>?, _: CVariadicArguments) in }
        let delegate = DynamicDelegate(protocol: ProtocolDescriptor(name: "t", methods: [
            MethodDescriptor(name: "f", signature: CSignature(.int64, [.int64, .int64])),
            MethodDescriptor(name: "g", signature: CSignature(.longDouble, [.longDouble])),
        ]))
        try delegate.implement("f") { (a: Int64, b: Int64) -> Int64 in a * b }
        try delegate.implement("g", dynamic: { _ in })
        let token = try delegate.observe("f", .after) { (_: Int64, _: Int64) in }
        #expect(fx_call_i64(add.address, 2, 3) == 5 && fx_call_i64(slow.address, 2, 3) == -1)
        for address in [add.address, slow.address, many.address, logger.address, delegate.table.load(as: UnsafeRawPointer.self),
                        delegate.table.load(fromByteOffset: 8, as: UnsafeRawPointer.self)] {
            #expect(fx_code_kind(address) != 0)
            #expect(Self.mapping(of: address) == ("r-xp", Self.executable))
        }
        #expect(fx_code_kind(add.address) == (RegisterPath.isAvailable ? 1 : 2))
        #expect(fx_code_kind(slow.address) == 2 && fx_code_kind(many.address) == 2 && fx_code_kind(logger.address) == 2)
        let found = Self.writableExecutable()
        #expect(found.count == 0, "\(found.lines)")
        withExtendedLifetime((add, slow, many, logger, delegate, token)) {}
    }

    /// What the release build prints for `table` and `mdwe`: the register path's slots wherever it runs,
    /// libffi's for the variadic closure, all in the binary's own read+execute pages, no writable+executable
    /// mapping, no slot held once they are gone, and the same in a forked child.
    static var expectedRelease: String {
        let registers = ExpectedRegisterPath.onThisCPU ? "registers" : "libffi"
        let results = "comparator \(registers) in this binary: [9, 5, 3, 0, -2]\nclosure \(registers) in this binary: 42\n"
            + "variadic closure libffi in this binary: 42 apples 1.50 1099511627776 x 4000000000 0x1234\n"
            + "stacked slot \(registers) in this binary: 43, observed 1\nplain slot \(registers) in this binary: -1\n"
            + "writable+executable mappings: 0\nslots held afterwards: 0"
        return results + "\nchild: " + results.split(separator: "\n").joined(separator: " | ") + "\nchild exited 0\n"
    }

    @Test func aReleaseBuildRunsEveryClosureOnTheTable() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-trampolines"), ["table"], environment: Self.registerPath)
        #expect(child.termination == .exit(0))
        #expect(child.output == Self.expectedRelease)
    }

    /// In a process that may never make memory executable (PR_SET_MDWE), the table maps all the same: the
    /// register path is taken, with the same results.
    @Test(.enabled(if: fx_executable_memory_forbiddable() != 0, "PR_SET_MDWE is unknown here (a kernel before 6.3, or qemu-user)"))
    func underMDWETheRegisterPathIsTaken() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-trampolines"), ["mdwe"], environment: Self.registerPath)
        #expect(child.termination == .exit(0))
        #expect(child.output == Self.expectedRelease)
    }

    /// A fork while another thread makes and frees slots: the lock is taken by fork itself, so no child
    /// finds it held by a thread it does not have, and every child makes, calls and frees one (a child
    /// that hangs is stopped by its alarm, the whole run by its own).
    @Test func aForkedChildMakesSlotsWhileTheParentChurns() throws {
        let child = run(try ReleaseBuild.executable("delegatekit-trampolines"), ["fork"], environment: Self.registerPath)
        #expect(child.termination == .exit(0))
        #expect(child.output == "300 of 300 children answered\n")
    }
}
