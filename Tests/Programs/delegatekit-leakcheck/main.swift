// `Scripts/valgrind-leakcheck.sh` runs this under `valgrind --leak-check=full`: every kind of closure
// and delegate DelegateKit makes, made and dropped many times over, driven from C. A definite leak
// anywhere in it fails the check. (Not a test-suite test: valgrind cannot run the test runner.)
import DelegateKit
import DelegateKitFixtures

let rounds = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 2_000

/// A wrapper class with closure properties, as a library built on DelegateKit would have.
final class Plugin: BlockDelegate {
    @Slot(\fx_plugin.start) var onStart: ((UnsafeMutableRawPointer?) -> Int32)?
    @Slot(\fx_plugin.transform) var onTransform: ((UnsafeMutableRawPointer?, Int64) -> Int64)?
    init() throws { try super.init(for: fx_plugin.self) }
}

typealias TransformNext = Next<UnsafeMutableRawPointer?, Int64, Int64>

func check(_ condition: Bool, _ what: String) {
    if !condition { fatalError("leak check workload went wrong: \(what)") }
}

func round(_ i: Int64) throws {
    // A capturing closure as a C function pointer.
    let closure = try CClosure { (x: Int64) -> Int64 in x + i }
    let function: @convention(c) (Int64) -> Int64 = try closure.functionPointer()
    check(function(1) == i + 1, "closure")

    // A callback C calls once, and one C releases through its destroy notification.
    let once = try CCallback.oneShot { (_: UnsafeMutableRawPointer?, status: Int32) in check(status == 7, "one-shot") }
    fx_start_operation(try once.functionPointer(), nil)
    check(fx_complete_operations(7) == 1, "one-shot completion")
    let handler = try NotifiedCallback { (x: Int64) -> Int64 in x * 2 + i }
    fx_set_handler(try handler.functionPointer(), handler.userData, handler.destroyNotify)
    check(fx_call_handler(3) == 6 + i, "released by C")
    fx_clear_handler()

    // A delegate with a stack, an observer, a removal and a forwarding target.
    let fallback = TypedDelegate(for: fx_plugin.self)
    try fallback.implement(\.transform) { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in -x }
    let delegate = DynamicDelegate(protocol: ProtocolDescriptor(for: fx_plugin.self))
    try delegate.setForwardingTarget(.delegate(fallback))
    try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, x: Int64) -> Int64 in x }
    try delegate.override("transform") { (next: TransformNext, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in next(context, x) + 1 }
    let token = try delegate.observe("transform", .after) { (_: UnsafeMutableRawPointer?, _: Int64) in }
    var called = false
    let table = delegate.table.assumingMemoryBound(to: fx_plugin.self)
    check(fx_plugin_transform(table, nil, i, &called) == i + 1, "stack")
    token.cancel()
    delegate.removeImplementation(for: "transform")
    check(fx_plugin_transform(table, nil, i, &called) == -i, "forwarding")

    // A wrapper of a live table, and a block delegate.
    let wrapper = TypedDelegate(for: fx_plugin.self, wrapping: fallback.typedTable)
    try wrapper.override(\.transform) { (next: TransformNext, context: UnsafeMutableRawPointer?, x: Int64) -> Int64 in next(context, x) * 10 }
    check(fx_plugin_transform(wrapper.typedTable, nil, 2, &called) == -20, "wrapper")
    let plugin = try Plugin()
    plugin.onTransform = { _, x in x + i }
    check(fx_plugin_transform(plugin.table.assumingMemoryBound(to: fx_plugin.self), nil, 1, &called) == 1 + i, "block delegate")
    plugin.onTransform = nil

    // Calling C: a library opened and closed, typed, run-time and variadic calls, a callback scope.
    let library = try CLibrary(path: "libc.so.6")
    let labs = try CFunction("labs", declaration: "long labs(long)", in: library)
    check(try labs.call(-i) as Int == Int(i), "typed call")
    check(try labs.call([.signed(-i)]) == .signed(i), "run-time call")
    let sum = try CFunction(address: fx_function("fx_sum_variadic"), declaration: "double (const char *, ...)")
    let total: Double = try "idl".withCString { try sum.call($0, Int8(1), Float(0.5), Int(i)) }
    check(total == 1.5 + Double(i), "variadic call")
    try withCallbackScope {
        let scoped = try CClosure { (x: Int64) -> Int64 in x - i }
        let function: @convention(c) (Int64) -> Int64 = try scoped.functionPointer()
        check(function(i) == 0, "scoped closure")
        _ = TypedDelegate(for: fx_plugin.self)
    }
}

for i in 0..<rounds { try round(Int64(i)) }
print("leak check workload: \(rounds) rounds done")
