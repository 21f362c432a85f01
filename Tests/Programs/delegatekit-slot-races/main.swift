// Calls that race the changes of their slot, in whichever build runs it: Tests/DelegateKitTests/
// SlotChangeTests.swift runs the release build and the suite's own (debug, or a sanitizer's), on both call
// paths (DELEGATEKIT_FAST_PATH), and checks what it prints.
//
//   delegatekit-slot-races states        every state a call can find its slot in while a change is in
//                                        progress (the list in SlotChange.swift), one line apiece
//   delegatekit-slot-races stress CALLS ROUNDS
//                                        C threads call a slot while this thread implements, replaces and
//                                        removes it: CALLS calls by fresh threads (one call each, a thread's
//                                        first, which makes its record), then long-lived threads calling
//                                        during ROUNDS rounds of changes; on a plain slot (stubs) and a
//                                        `.stable` one (its dispatcher); every result is checked, and counted
//   delegatekit-slot-races stress-wide CALLS ROUNDS
//                                        the same with `transform` described and called with eight value
//                                        arguments, some on the caller's stack: where the register path runs,
//                                        its stubs and dispatcher enter through the array entry
//   delegatekit-slot-races stress-eight CALLS ROUNDS
//                                        the same with seven value arguments (eight parameters, the most a
//                                        fixed-arity closure takes; in an optimized build, handed the array
//                                        entry's arguments one by one)
//   delegatekit-slot-races stress-struct CALLS ROUNDS
//                                        the same with `transform` taking and returning a struct of four
//                                        int64_t (in memory on x86_64: the array entry's result in memory)
//
// A failed check prints a line with "FAILED"; the last line is "done". An alarm ends a run that hangs.
import DelegateKit
import DelegateKitFixtures
import Dispatch
import Glibc
import Synchronization

/// fx_plugin (DelegateKitFixtures.h), as a program would describe it.
let plugin = ProtocolDescriptor(name: "fx_plugin", members: [
    .field("version", .int32),
    .method(MethodDescriptor(name: "start", signature: CSignature(.int32, [.pointer]))),
    .method(MethodDescriptor(name: "transform", signature: CSignature(.int64, [.pointer, .int64]))),
    .method(MethodDescriptor(name: "log", signature: CSignature(.void, [.pointer, .pointer]))),
    .method(MethodDescriptor(name: "weigh", signature: CSignature(.double, [.pointer, .pointer]))),
])

/// fx_plugin with `transform` as C calls it in `stress-wide` (fx_wide_transform), at the same offset.
let widePlugin = ProtocolDescriptor(name: "fx_plugin", members: [
    .field("version", .int32),
    .method(MethodDescriptor(name: "start", signature: CSignature(.int32, [.pointer]))),
    .method(MethodDescriptor(name: "transform", signature: CSignature(.int64, [.pointer] + Array(repeating: .int64, count: 8)))),
])

/// fx_plugin with `transform` as C calls it in `stress-eight` (fx_eight_transform), at the same offset.
let eightPlugin = ProtocolDescriptor(name: "fx_plugin", members: [
    .field("version", .int32),
    .method(MethodDescriptor(name: "start", signature: CSignature(.int32, [.pointer]))),
    .method(MethodDescriptor(name: "transform", signature: CSignature(.int64, [.pointer] + Array(repeating: .int64, count: 7)))),
])

/// fx_plugin with `transform` as C calls it in `stress-struct` (fx_quad_transform), at the same offset.
let quadPlugin = ProtocolDescriptor(name: "fx_plugin", members: [
    .field("version", .int32),
    .method(MethodDescriptor(name: "start", signature: CSignature(.int32, [.pointer]))),
    .method(MethodDescriptor(name: "transform", signature: CSignature(fx_quad.cType, [.pointer, fx_quad.cType]))),
])

extension fx_quad: CValue {
    public static var cType: CType { .structure(Array(repeating: .int64, count: 4)) }
}

/// How the hammer calls `transform`: as fx_plugin declares it, with eight value arguments, or with a struct.
enum Shape: String {
    case narrow = "stress", wide = "stress-wide", eight = "stress-eight", quad = "stress-struct"

    var descriptor: ProtocolDescriptor {
        switch self {
        case .narrow: return plugin
        case .wide: return widePlugin
        case .eight: return eightPlugin
        case .quad: return quadPlugin
        }
    }

    var label: String {
        switch self {
        case .narrow: return ""
        case .wide: return "wide, "
        case .eight: return "eight, "
        case .quad: return "struct, "
        }
    }
}

typealias Transform = @convention(c) (UnsafeMutableRawPointer?, Int64) -> Int64

nonisolated(unsafe) var failures = 0  // Only the main thread checks.
func check(_ condition: Bool, _ what: @autoclosure () -> String) {
    guard !condition else { return }
    failures += 1
    print("FAILED: \(what())")
}

func table(of delegate: DynamicDelegate) -> UnsafeMutablePointer<fx_plugin> {
    delegate.table.assumingMemoryBound(to: fx_plugin.self)
}

/// A value that must be there, or an error that ends the run.
func required<T>(_ value: T?, _ what: String) throws -> T {
    guard let value else { throw Missing(what: what) }
    return value
}
struct Missing: Error { let what: String }

/// What C finds in the slot now: its function, or nil.
func loaded(_ delegate: DynamicDelegate) -> Transform? {
    table(of: delegate).pointee.transform
}

/// Which entry C's call of `address` takes: the path this process runs.
func path(of address: UnsafeRawPointer?) -> String {
    guard let address else { return "NULL" }
    return ["not a slot", "registers", "libffi"][Int(fx_code_kind(address))]
}

/// A count other threads read.
final class Counter: Sendable {
    private let storage: Atomic<Int>
    init(_ value: Int = 0) { storage = Atomic(value) }
    var value: Int { storage.load(ordering: .sequentiallyConsistent) }
    func store(_ value: Int) { storage.store(value, ordering: .sequentiallyConsistent) }
    func increment() { storage.add(1, ordering: .sequentiallyConsistent) }
}

/// An object a closure captures, which counts its release.
final class Witness: Sendable {
    let value: Int64
    private let released: Counter

    init(_ value: Int64, released: Counter) {
        self.value = value
        self.released = released
    }

    deinit { released.increment() }
}

// MARK: - States

/// Calls through pointers C loaded before a change, made after it, one state apiece.
func states() throws {
    let delegate = DynamicDelegate(protocol: plugin)

    // 1. NULL: nothing implements the slot; C's own test sees it and calls nothing.
    check(loaded(delegate) == nil, "an unimplemented slot is not NULL")
    print("NULL slot: C finds NULL")

    // 2. A published stub: the implementation's closure.
    try delegate.implement("transform", key: "a") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + 1 }
    let first = try required(loaded(delegate), "the implemented slot is NULL")
    print("stub (\(path(of: unsafeBitCast(first, to: UnsafeRawPointer.self)))): \(first(nil, 10))")

    // 3. A retired stub, the slot holding another implementation's stub: it forwards there.
    try delegate.implement("transform", key: "b") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + 2 }
    let second = try required(loaded(delegate), "the replaced slot is NULL")
    check(unsafeBitCast(second, to: UInt.self) != unsafeBitCast(first, to: UInt.self), "two implementations share a stub")
    print("retired stub, slot holding another: \(first(nil, 10)) (the slot's own: \(second(nil, 10)))")

    // 4. A retired stub, the slot NULL: zero, the default value (C cannot be told it is gone).
    delegate.removeImplementation(for: "transform", key: "b")
    delegate.removeImplementation(for: "transform", key: "a")
    check(loaded(delegate) == nil, "the emptied slot is not NULL")
    print("retired stubs, slot NULL: \(first(nil, 10)) \(second(nil, 10))")

    // 5. A stub reused: the slot's next plain implementation takes an idle stub, so a pointer C kept
    //    to it runs the new closure, as if C had loaded the slot just now.
    try delegate.implement("transform", key: "c") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + 3 }
    let third = try required(loaded(delegate), "the re-implemented slot is NULL")
    let reused = [first, second].contains { unsafeBitCast($0, to: UInt.self) == unsafeBitCast(third, to: UInt.self) }
    check(reused, "the new implementation took a new stub while idle ones were left")
    print("stub reused: \(first(nil, 10)) \(second(nil, 10)) (\(reused ? "one of them is the slot's" : "not reused"))")

    // 6. The dispatcher of a `.stable` slot: one pointer for good, running what the slot holds at each
    //    call, zero while nothing implements it.
    try delegate.setPolicy(.stable, for: "transform")
    let dispatcher = try required(loaded(delegate), "a stable slot is NULL")
    let stableBefore = dispatcher(nil, 10)
    delegate.removeImplementation(for: "transform", key: "c")
    let stableEmpty = dispatcher(nil, 10)
    try delegate.implement("transform", key: "d") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + 4 }
    check(unsafeBitCast(loaded(delegate), to: UInt.self) == unsafeBitCast(dispatcher, to: UInt.self), "a stable slot changed its pointer")
    print("dispatcher (\(path(of: unsafeBitCast(dispatcher, to: UnsafeRawPointer.self)))): \(stableBefore), empty \(stableEmpty), then \(dispatcher(nil, 10))")
    // Every stub C saw forwards to the dispatcher now.
    print("retired stubs, slot holding the dispatcher: \(first(nil, 10)) \(second(nil, 10)) \(third(nil, 10))")

    // 7. A dispatcher's stack: a removed layer is skipped by the calls that start after its removal.
    try delegate.override("transform", key: "twice") { (next: Next<UnsafeMutableRawPointer?, Int64, Int64>, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
        next(context, x) * 2
    }
    let stacked = dispatcher(nil, 10)
    delegate.removeImplementation(for: "transform", key: "twice")
    print("dispatcher with a layer: \(stacked), layer removed: \(dispatcher(nil, 10))")

    // 8. Forwarded: a slot nothing implements here reaches its forwarding target's implementation
    //    through this slot's dispatcher, following the target as it changes.
    let front = DynamicDelegate(protocol: plugin)
    try front.setForwardingTarget(.delegate(delegate))
    let forwarded = try required(loaded(front), "a forwarding slot is NULL")
    let viaTarget = forwarded(nil, 10)
    delegate.removeImplementation(for: "transform", key: "d")
    print("forwarded (\(path(of: unsafeBitCast(forwarded, to: UnsafeRawPointer.self)))): \(viaTarget), target emptied: \(forwarded(nil, 10)), slot \(loaded(front) == nil ? "NULL" : "set")")
    try front.setForwardingTarget(nil)

    // 9. A trampoline slot freed and handed out again: never one C was given for a delegate that lives.
    //    Its stubs and dispatchers go back to their slot, not to the table, until the delegate is gone;
    //    closures made and freed meanwhile reuse slots among themselves only.
    let given = Set([first, second, third, dispatcher, forwarded].map { UInt(bitPattern: unsafeBitCast($0, to: UnsafeRawPointer.self)) })
    var seen: Set<UInt> = [], slotsReused = 0, taken = 0
    for round in 0..<2_000 {
        let closure = try CClosure { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x + Int64(round) }
        let address = UInt(bitPattern: closure.address)
        if given.contains(address) { taken += 1 }
        if !seen.insert(address).inserted { slotsReused += 1 }
    }
    check(taken == 0, "\(taken) closures took a trampoline slot of a live delegate's")
    #if DEBUG
    check(slotsReused == 0, "a debug build freed a dead closure's slot at once")  // the graveyard keeps them
    #else
    check(slotsReused > 0, "closures made and freed one after another reused no slot: the check above proves nothing")
    #endif
    print("2000 closures made and freed: none took a slot of the live delegates' (\(given.count) addresses)")
    withExtendedLifetime((delegate, front)) {}
}

/// A call inside its closure while another thread removes it: it runs to its end with what it
/// captured, which is released only after the call leaves. `call` has another thread make the call of
/// `transform` with 5 and returns a function that waits for it to end.
func runningWhileRemoved(_ label: String, stable: Bool, nested: Bool, call: (UnsafeMutablePointer<fx_plugin>) -> () -> Void) throws {
    let delegate = DynamicDelegate(protocol: plugin)
    if stable { try delegate.setPolicy(.stable) }
    let slots = table(of: delegate)
    let released = Counter(), releasedInside = Counter(-1), answer = Counter(-1)
    let entered = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
    do {
        let witness = Witness(7, released: released)
        let body: @Sendable (Int64) -> Int64 = { x in
            entered.signal()
            proceed.wait()
            releasedInside.store(released.value)
            answer.store(Int(x + witness.value))
            return x + witness.value
        }
        if nested {
            // The closure that blocks is another slot's, which `transform`'s calls through C.
            try delegate.implement("start") { (_: UnsafeMutableRawPointer?) -> Int32 in Int32(body(5)) }
            let address = UInt(bitPattern: slots)
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                guard x != 0, let start = UnsafePointer<fx_plugin>(bitPattern: address)?.pointee.start else { return 0 }
                return Int64(start(nil))
            }
        } else {
            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in
                x == 0 ? 0 : body(x)  // 0: a long-lived thread's first call, which makes its record
            }
        }
    }
    let wait = call(slots)
    entered.wait()
    delegate.removeImplementation(for: nested ? "start" : "transform")
    let releasedEarly = released.value
    proceed.signal()
    wait()
    let settled = try delegate.waitForRemovedCalls(timeout: .seconds(20))
    let releasedAfter = released.value
    check(releasedEarly == 0 && releasedInside.value == 0,
          "\(label): what the running call captured was released while it ran")
    check(settled && releasedAfter == 1, "\(label): what the call captured was not released once it left (\(releasedAfter))")
    check(answer.value == 12, "\(label): the call answered \(answer.value)")
    print("\(label), \(stable ? "stable slot" : "plain slot"): answered \(answer.value), "
        + "captures released \(releasedEarly) while it ran, \(releasedAfter) once it left")
}

/// ``runningWhileRemoved`` on each kind of call a thread makes.
func callsRunningWhileRemoved() throws {
    // A fresh thread's call: the thread's first, whose record the call makes (the entry's rare path).
    func freshThread(_ table: UnsafeMutablePointer<fx_plugin>) -> () -> Void {
        let caller = fx_caller_start(table, 5)
        return { _ = fx_caller_join(caller, nil) }
    }
    // A long-lived thread's call, once its record exists: the outermost call's common path.
    func longLivedThread(_ table: UnsafeMutablePointer<fx_plugin>) -> () -> Void {
        let worker = fx_pool_thread_start(table)
        _ = fx_pool_thread_call(worker, 0)
        nonisolated(unsafe) let running = worker
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = fx_pool_thread_call(running, 5)
            done.signal()
        }
        return {
            done.wait()
            fx_pool_thread_stop(running)
        }
    }
    for stable in [false, true] {
        try runningWhileRemoved("a fresh thread's first call", stable: stable, nested: false, call: freshThread)
        try runningWhileRemoved("a long-lived thread's call", stable: stable, nested: false, call: longLivedThread)
        try runningWhileRemoved("a nested call on a fresh thread", stable: stable, nested: true, call: freshThread)
        try runningWhileRemoved("a nested call on a long-lived thread", stable: stable, nested: true, call: longLivedThread)
    }
}

// MARK: - Stress

/// What a stress closure captures: it says whether its closure is released while a call runs it.
final class Sentinel: Sendable {
    let id: Int64
    init(_ id: Int64) { self.id = id }
    deinit { fx_flight_released(id) }
}

/// A callback's own work, a few hundred nanoseconds of arithmetic that answers `value`: calls spend
/// their time inside the closure, where a change finds them.
@inline(never)
func work(_ value: Int64) -> Int64 {
    var mixed = UInt64(bitPattern: value)
    for step in UInt64(0)..<256 { mixed = (mixed &* 6364136223846793005 &+ step) ^ (mixed >> 29) }
    workSink.store(mixed, ordering: .relaxed)
    return value
}
let workSink = Atomic<UInt64>(0)

/// C threads call `transform` while this thread implements v1 (i * 1000), replaces it with v2
/// (i * 1000 + 1) and removes it: every answer is one of those or zero (a call that arrived after the
/// removal emptied the slot), or the slot was NULL. Fresh threads make `amount` calls, one each;
/// long-lived ones call until this thread has made `amount` rounds of changes.
func stress(fresh: Bool, stable: Bool, shape: Shape, amount: Int64) throws {
    let delegate = DynamicDelegate(protocol: shape.descriptor)
    if stable { try delegate.setPolicy(.stable, for: "transform") }
    let threads: Int32 = 4
    let iterations = fresh ? amount / Int64(threads) : .max
    guard let hammer = shape == .wide
        ? fx_hammer_start_wide(table(of: delegate), threads, iterations, 2, fresh)
        : shape == .eight
        ? fx_hammer_start_eight(table(of: delegate), threads, iterations, 2, fresh)
        : shape == .quad
        ? fx_hammer_start_quad(table(of: delegate), threads, iterations, 2, fresh)
        : fresh
        ? fx_hammer_start_fresh(table(of: delegate), threads, amount / Int64(threads), 2)
        : fx_hammer_start(table(of: delegate), threads, .max, 2)
    else { return check(false, "the hammer did not start") }
    var rounds: Int64 = 0
    let violations = fx_flight_violation_count()
    while !fx_hammer_finished(hammer) {
        for k in Int64(0)...1 {
            // Each closure counts its calls in flight, and what it captures checks the count as it is
            // released: a call judged gone while it runs is caught here, not only when it reads freed memory.
            let id = rounds * 2 + k, sentinel = Sentinel(id)
            let answer: @Sendable (Int64) -> Int64 = { i in
                fx_flight_enter(id)
                defer { fx_flight_leave(id) }
                return withExtendedLifetime(sentinel) { work(i) * 1000 + k }
            }
            if shape == .quad {
                // Every field is i; one that is not answers -1 in every field, which the hammer counts as wrong.
                let body: @Sendable (UnsafeMutableRawPointer?, fx_quad) -> fx_quad = { _, q in
                    let right = q.a == q.b && q.b == q.c && q.c == q.d
                    let r = right ? answer(q.a) : -1
                    return fx_quad(a: r, b: r, c: r, d: r)
                }
                try delegate.implement("transform", body)
            } else if shape == .wide {
                // Every value argument is i; one that is not answers -1, which the hammer counts as wrong.
                let body: @Sendable (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = {
                    _, i, a, b, c, d, e, f, g in
                    [a, b, c, d, e, f, g].allSatisfy { $0 == i } ? answer(i) : -1
                }
                try delegate.implement("transform", body)
            } else if shape == .eight {
                let body: @Sendable (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = {
                    _, i, a, b, c, d, e, f in
                    [a, b, c, d, e, f].allSatisfy { $0 == i } ? answer(i) : -1
                }
                try delegate.implement("transform", body)
            } else {
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, i: Int64) -> Int64 in answer(i) }
            }
        }
    delegate.removeImplementation(for: "transform")
        rounds += 1
        if !fresh && rounds == amount { fx_hammer_stop(hammer) }
    }
    let firstWrong = fx_hammer_first_wrong(hammer)
    var wrong: Int64 = 0, nulls: Int64 = 0
    let answered = fx_hammer_join(hammer, &wrong, &nulls)
    let label = "\(shape.label)\(fresh ? "fresh threads" : "long-lived threads"), \(stable ? "stable slot (dispatcher)" : "plain slot (stubs)")"
    check(wrong == 0, "\(label): \(wrong) wrong answers, the first \(firstWrong) beyond i * 1000")
    let released = fx_flight_violation_count() - violations
    check(released == 0, "\(label): \(released) closures released while a call ran them")
    check(!fresh || answered + nulls == amount / Int64(threads) * Int64(threads), "\(label): calls went missing")
    print("\(label): \(answered + nulls) calls checked (\(answered) answered, \(nulls) NULL or removed), \(wrong) wrong, \(rounds) rounds of changes")
}

// MARK: - Main

// SIGALRM's default action ends the process, whichever thread it reaches.
alarm(300)
let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "states":
        try states()
        try callsRunningWhileRemoved()
    case "stress", "stress-wide", "stress-eight", "stress-struct":
        let shape = Shape(rawValue: arguments.first!)!
        let calls = arguments.dropFirst().first.flatMap { Int64($0) } ?? 40_000
        let rounds = arguments.dropFirst(2).first.flatMap { Int64($0) } ?? 20_000
        for stable in [false, true] {
            try stress(fresh: true, stable: stable, shape: shape, amount: calls)
            try stress(fresh: false, stable: stable, shape: shape, amount: rounds)
        }
    default:
        print("usage: delegatekit-slot-races states | stress [calls] [rounds] | stress-wide [calls] [rounds] | stress-eight [calls] [rounds] | stress-struct [calls] [rounds]")
        exit(2)
    }
} catch {
    check(false, "threw \(error)")
}
print("done")
exit(failures == 0 ? 0 : 1)
