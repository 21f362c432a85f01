@testable import DelegateKit  // RegisterPath.withLibffiEntry: both call paths in one process
import DelegateKitFixtures
import Glibc
import Testing

/// `__int128`: parsed and laid out always, passed by libffi 3.6 and later (the 6.2.3 chroot's and the
/// arm64 root's 3.8.0), refused with a clear error by an older one (the host's 3.4.4).
@Suite struct Int128Tests {
    /// Whether the libffi the tests run with exports 128-bit integer types (3.6 and later do): what
    /// DelegateKit's own answer, from the header it was built with, must agree with.
    private static let libffiPassesInt128 = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "ffi_type_sint128") != nil

    private static func onBothPaths(_ body: () throws -> Void) throws {
        try body()
        try RegisterPath.withLibffiEntry(body)
    }

    @Test func theParserReadsEverySpelling() throws {
        let signature = try CSignature(parsing: "__int128 (unsigned __int128, __int128_t, __uint128_t, signed __int128, __int128 unsigned)")
        #expect(signature == CSignature(.int128, [.uint128, .int128, .uint128, .int128, .uint128]))
        for refused in ["void (long __int128)", "void (short __int128)", "void (unsigned __int128_t)"] {
            #expect(throws: DelegateError.self, "\(refused)") { try CSignature(parsing: refused) }
        }
        #expect(CType.uint128.description == "unsigned __int128")
        #expect(CType.int128.size == MemoryLayout<Int128>.stride && CType.int128.alignment == MemoryLayout<Int128>.alignment)
        #expect(try UInt128.checkedCType() == .uint128)
        #expect(CType.int128 != .uint128 && CType.int128 != .structure([.int64, .int64]))
    }

    @Test func callsAndClosuresPassThemOrSayWhyNot() throws {
        let declaration = "__int128 (__int128, __int128, __int128)"
        guard Self.libffiPassesInt128 else {
            let refusal = DelegateError.invalidSignature(
                CSignature(.int128, [.int128, .int128, .int128]),
                reason: "the libffi DelegateKit was built with cannot pass `__int128` on this platform (libffi 3.6 and later can, on x86_64 and aarch64)")
            #expect(throws: refusal) { try CFunction(address: fixture("fx_int128_muladd"), declaration: declaration) }
            #expect(throws: DelegateError.self) { try CClosure { (x: UInt128, _: Int32) -> UInt128 in x } }
            return
        }
        let muladd = try CFunction(address: fixture("fx_int128_muladd"), declaration: declaration)
        let apply = try CFunction(
            address: fixture("fx_uint128_apply"),
            declaration: "unsigned __int128 (unsigned __int128 (*)(unsigned __int128, int), unsigned __int128, int)")
        try Self.onBothPaths {
            let big = Int128(1) << 100
            #expect(try muladd.call(big, Int128(-3), Int128(7), returning: Int128.self) == big * -3 + 7)
            // Run-time values: integers converted exactly, the result as its bytes.
            guard case .bytes(let bytes) = try muladd.call([.signed(-1 << 62), .signed(8), .unsigned(5)]) else {
                Issue.record("an __int128 result is not read as bytes")
                return
            }
            #expect(bytes.withUnsafeBytes { $0.loadUnaligned(as: Int128.self) } == Int128(-1 << 62) * 8 + 5)
            let shift = try CClosure { (x: UInt128, by: Int32) -> UInt128 in x << by | 1 }
            let shifted = try apply.call(shift.address, UInt128(UInt64.max), Int32(64), returning: UInt128.self)
            #expect(shifted == (UInt128(UInt64.max) << 64 | 1) + 1)
        }
    }
}
