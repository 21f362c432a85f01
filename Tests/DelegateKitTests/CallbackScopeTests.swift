import DelegateKit
import DelegateKitFixtures
import Glibc
import Testing

/// `withCallbackScope` keeps what is made in it until it ends and releases it then; `withExtendedLifetime`
/// keeps one closure for one call. Weak references show when each object goes.
@Suite struct CallbackScopeTests {
    @Test func aScopeKeepsClosuresAndDelegatesUntilItEnds() throws {
        weak var closure: CClosure?
        weak var delegate: DynamicDelegate?
        weak var typed: TypedDelegate<fx_plugin>?
        try withCallbackScope {
            // Assigned straight to weak references: only the scope holds them.
            closure = passedThrough(try CClosure { (x: Int64) -> Int64 in x * 3 })
            delegate = passedThrough(DynamicDelegate(protocol: pluginProtocol))
            typed = passedThrough(TypedDelegate(for: fx_plugin.self))
            let function: @convention(c) (Int64) -> Int64 = try #require(closure).functionPointer()
            #expect(function(5) == 15)
            try #require(delegate).implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + 1 }
            var called = false
            #expect(fx_plugin_transform(try #require(delegate).table.assumingMemoryBound(to: fx_plugin.self), nil, 1, &called) == 2)
            #expect(typed != nil)
        }
        #expect(closure == nil)
        #expect(delegate == nil)
        #expect(typed == nil)
    }

    @Test func withoutAScopeNothingIsKept() throws {
        weak var closure: CClosure?
        closure = passedThrough(try CClosure { (x: Int64) -> Int64 in x })
        #expect(closure == nil)
    }

    @Test func whatTheProgramKeepsOutlivesTheScope() throws {
        weak var weakKept: CClosure?
        let kept = try withCallbackScope {
            let made = try CClosure { (x: Int32) -> Int32 in x + 1 }
            weakKept = made
            return made
        }
        #expect(weakKept != nil)
        let function: @convention(c) (Int32) -> Int32 = try kept.functionPointer()
        #expect(function(1) == 2)
    }

    @Test func scopesNest() throws {
        weak var outer: CClosure?
        weak var inner: CClosure?
        try withCallbackScope {
            outer = passedThrough(try CClosure { (x: Int32) -> Int32 in x })
            try withCallbackScope {
                inner = passedThrough(try CClosure { (x: Int32) -> Int32 in x })
                #expect(inner != nil && outer != nil)
            }
            #expect(inner == nil)
            #expect(outer != nil)
        }
        #expect(outer == nil)
    }

    @Test func anAsyncScopeKeepsAcrossSuspensions() async throws {
        weak var closure: CClosure?
        try await withCallbackScope {
            closure = passedThrough(try CClosure { (x: Int32) -> Int32 in x })
            await Task.yield()
            #expect(closure != nil)
        }
        #expect(closure == nil)
    }

    @Test func aClosureForOneCallWithQsort() throws {
        var numbers: [Int32] = [5, -2, 9, 0, 3]
        weak var watched: CClosure?
        let compare = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
            return x < y ? 1 : x > y ? -1 : 0
        }
        watched = compare
        try withExtendedLifetime(compare) { qsort(&numbers, numbers.count, 4, try compare.functionPointer()) }
        #expect(numbers == [9, 5, 3, 0, -2])
        _ = consume compare
        #expect(watched == nil)
    }

    @Test func aCallAfterItsScopeEndedStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var pointer: (@convention(c) (Int32) -> Int32)?
            do {
                try withCallbackScope {
                    pointer = try CClosure { (x: Int32) -> Int32 in x }.functionPointer()
                    _ = pointer?(1)  // alive here
                }
            } catch {
                return
            }
            _ = pointer?(1)
        }
        expectDeadCall(result, saying: ["DelegateKit: a CClosure `int32_t (int32_t)` was called after it was deinitialized"])
    }
}

/// `object`, for assigning to a weak reference with no strong one left: the compiler warns about a new
/// instance assigned straight to one, which is exactly what these tests mean to do.
private func passedThrough<T: AnyObject>(_ object: T) -> T { object }
