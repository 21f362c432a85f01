import CDelegateKitRetirement
import DelegateKit
import DelegateKitFixtures
import Testing

/// The record of calls in progress (`CFFIShim/Retirement/Retirement.c`) after calls that return: every call a
/// thread made and left is gone from its record, so removers never have to judge it (through the
/// kernel, a path whose ordering ThreadSanitizer cannot see).
@Suite struct CallRecordTests {
    /// A stale pointer into a slot's retired stub forwards to what the slot holds now: two calls, one
    /// nested in the other. Both leave the record, in a debug build too (where a `defer` would have run
    /// the leaving in a frame of its own, which the record does not know, and left both entries).
    @Test func aForwardedCallLeavesNothingBehind() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
        let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
        let stale = try #require(table.pointee.transform)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 2 }
        let current = try #require(table.pointee.transform)
        #expect(unsafeBitCast(stale, to: UInt.self) != unsafeBitCast(current, to: UInt.self))
        let before = cffi_calls_in_progress_here()
        #expect(stale(nil, 40) == 42)
        #expect(cffi_calls_in_progress_here() == before)
    }

    /// Where the kernel lets removers order every thread's calls with membarrier(2), a call publishes
    /// itself with a plain store and removers pay; where it refuses (a kernel without it, a container's
    /// seccomp profile), every call fences itself. CI runs the whole suite both ways
    /// (`Scripts/without-membarrier.py`); this says the way taken is the one this process allows, once a
    /// removal has decided it.
    @Test func callsFenceThemselvesExactlyWhereMembarrierIsRefused() throws {
        let delegate = DynamicDelegate(protocol: pluginProtocol)
        try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value + 1 }
        let transform = try #require(delegate.table.assumingMemoryBound(to: fx_plugin.self).pointee.transform)
        #expect(transform(nil, 41) == 42)
        #expect(delegate.removeImplementation(for: "transform"))
        let available = fx_membarrier_available() != 0
        #expect(cffi_removers_use_membarrier() == (available ? 1 : 0), "membarrier available: \(available)")
    }
}
