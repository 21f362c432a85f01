// Every kind of closure on DelegateKit's trampoline table, in a release build: Tests/DelegateKitTests/
// TrampolineTableTests.swift runs this and checks what it prints (ArityTests.swift its `arities`, in the
// suite's own build too).
//
//   delegatekit-trampolines table   each kind of closure through C: its slot's kind, where its code is
//                                   mapped, its answer; then the writable+executable mappings of the
//                                   process, and the slots still held once all of them are gone; then
//                                   the same in a forked child
//   delegatekit-trampolines mdwe    the same under PR_SET_MDWE (no memory may become executable)
//   delegatekit-trampolines fork    forks again and again while another thread makes and frees slots:
//                                   each child makes, calls and frees one (the slots' lock must not be
//                                   held by a thread the child does not have)
//   delegatekit-trampolines arities closures of seven and eight parameters, in the form the fixed-arity
//                                   overloads give them in a release build (register form, or libffi's
//                                   array element by element) and in pack form, as CClosures, slots and
//                                   `.stable` slots, called through C: a line each, its answer right or
//                                   not (a debug build runs all of them in pack form)
import CDelegateKitTrampolines
import DelegateKit
import DelegateKitFixtures
import Glibc
import Synchronization

/// This executable's path, which the table's mappings name.
let executable: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
}()

/// Where the code at `address` is: its slot's kind ("registers", "libffi" or "not a slot") and its
/// mapping ("in this binary" when read+execute from this executable, else its permissions and file).
func home(of address: UnsafeRawPointer) -> String {
    let kind = ["not a slot", "registers", "libffi"][Int(fx_code_kind(address))]
    var permissions = [CChar](repeating: 0, count: 5)
    var path = [CChar](repeating: 0, count: 4096)
    guard fx_mapping_of(address, &permissions, &path, path.count) == 0 else { return kind + " unmapped" }
    let perms = String(decoding: permissions.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let file = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return kind + (perms == "r-xp" && file == executable ? " in this binary" : " in \(perms) \(file)")
}

/// The process's writable+executable mappings, as a line.
func writableExecutable() -> String {
    var lines = [CChar](repeating: 0, count: 8192)
    let count = fx_writable_executable_mappings(&lines, lines.count)
    let text = String(decoding: lines.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return "writable+executable mappings: \(count)" + (count > 0 ? "\n" + text : "")
}

/// The closures' answers through C, one line per kind, and where each one's code is.
func exercise() throws -> [String] {
    var lines: [String] = []
    let bias = Int64(getpid() > 0 ? 1 : 0)

    // A common shape (its own register entry) through glibc's qsort.
    var numbers: [Int32] = [5, -2, 9, 0, 3]
    let descending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
        let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
        return x < y ? 1 : x > y ? -1 : 0
    }
    try withExtendedLifetime(descending) { qsort(&numbers, numbers.count, 4, try descending.functionPointer()) }
    lines.append("comparator \(home(of: descending.address)): \(numbers)")

    // A generic closure (the shared register entry).
    let add = try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
    lines.append("closure \(home(of: add.address)): \(fx_call_i64(add.address, 40, 1))")

    // A variadic closure, which only libffi's entry serves.
    let formatted = Mutex("")
    let logger = try CClosure { (_: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
        let text = arguments.formatted(format!)
        formatted.withLock { $0 = text }
    }
    typealias LogThrough = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Void
    unsafeBitCast(fx_function("fx_log_kinds"), to: LogThrough.self)(logger.address, nil)
    lines.append("variadic closure \(home(of: logger.address)): \(formatted.withLock { $0 })")

    // A slot with a stack and an observer (the dispatcher's entry), and a plain slot (the stub's).
    let signature = CSignature(.int64, [.int64, .int64])
    let protocolDescriptor = ProtocolDescriptor(name: "pair", methods: [
        MethodDescriptor(name: "f", signature: signature), MethodDescriptor(name: "g", signature: signature),
    ])
    let delegate = DynamicDelegate(protocol: protocolDescriptor)
    try delegate.implement("f") { (a: Int64, b: Int64) -> Int64 in a &* b }
    try delegate.override("f") { (next: Next<Int64, Int64, Int64>, a: Int64, b: Int64) -> Int64 in next(a, b) &+ bias }
    let seen = Counter()
    let token = try delegate.observe("f", .before) { (_: Int64, _: Int64) in seen.increment() }
    try delegate.implement("g") { (a: Int64, b: Int64) -> Int64 in a &- b }
    let f = delegate.table.load(as: UnsafeRawPointer.self)
    let g = delegate.table.load(fromByteOffset: 8, as: UnsafeRawPointer.self)
    lines.append("stacked slot \(home(of: f)): \(fx_call_i64(f, 6, 7)), observed \(seen.value)")
    lines.append("plain slot \(home(of: g)): \(fx_call_i64(g, 6, 7))")
    lines.append(writableExecutable())
    withExtendedLifetime((descending, add, logger, delegate, token)) {}
    return lines
}

/// ``exercise()``, then the slots still held once every closure and delegate it made is gone: a release
/// build frees a slot when its holder goes (no graveyard), so anything but 0 is a slot lost.
func exerciseAndRelease() throws -> [String] {
    try exercise() + ["slots held afterwards: \(cffi_trampolines_live())"]
}

/// Counts from any thread.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// The code of a `CClosure` whose closure returns its first argument plus its context's address: made,
/// called and freed by `makeCallAndFree`.
nonisolated let addContext: @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeMutableRawPointer?) -> UInt64 = {
    i0, _, _, _, _, context in i0 &+ UInt64(UInt(bitPattern: context))
}

/// Makes a slot straight from the table, calls it and frees it: whether it answered right. Only C and a
/// `@convention(c)` function, nothing of Swift's runtime: what a forked child of a threaded process may
/// do. (A register slot puts its context where `addContext`'s sixth integer argument is: r9, x5.)
nonisolated func makeCallAndFree(_ context: Int) -> Bool {
    var code: UnsafeMutableRawPointer?
    guard let handle = cffi_trampoline_create(
        Int32(CFFI_TRAMPOLINE_REGISTERS), unsafeBitCast(addContext, to: UnsafeRawPointer.self),
        UnsafeMutableRawPointer(bitPattern: context), &code), let code
    else { return false }
    defer { cffi_trampoline_free(handle) }
    return unsafeBitCast(code, to: (@convention(c) (UInt64) -> UInt64).self)(1) == UInt64(context + 1)
}

/// `fork`: a thread churns the slots' lock while this one forks; a child whose slot does not answer
/// within 2 s (its lock held forever) is killed by its alarm, and the whole run by its own after 60 s.
/// Prints how many children answered.
func forkWhileChurning(forks: Int) -> Never {
    alarm(60)
    var churner = pthread_t()
    pthread_create(&churner, nil, { _ in
        var round = 0
        while true {
            round = round % 1000 + 1
            _ = makeCallAndFree(round * 16)
        }
    }, nil)
    var answered = 0
    for index in 0..<forks {
        let child = fork()
        if child == 0 {
            alarm(2)
            _exit(makeCallAndFree((index + 1) * 32) ? 0 : 1)
        }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        if status == 0 { answered += 1 }
    }
    print("\(answered) of \(forks) children answered")
    fflush(nil)
    _exit(0)
}

/// The same closure made through the variadic overloads, which keep it in pack form whatever its arity.
func packed<each A: CValue, R>(_ body: @escaping @Sendable (repeat each A) -> R) throws -> CClosure { try CClosure(body) }
func implementPacked<each A: CValue, R>(_ delegate: DynamicDelegate, _ method: String, _ body: @escaping @Sendable (repeat each A) -> R) throws {
    try delegate.implement(method, body)
}

/// Each closure of seven and eight parameters in each form, called through C with libffi's `ffi_call`.
func manyParameters() throws -> [String] {
    let mixed7 = { @Sendable (a: Int32, b: Double, c: Int16, d: Float, e: Int64, f: Double, g: UInt8) -> UInt16 in
        UInt16(truncatingIfNeeded: Int64(a) &* 3 &+ Int64(c) &* 5 &+ e &* 7 &+ Int64(g) &- Int64(b * 2 + Double(d) * 4 + f * 8))
    }
    let doubles8 = { @Sendable (a: Double, b: Double, c: Double, d: Double, e: Double, f: Double, g: Double, h: Double) -> Double in
        let first: Double = a + b * 2 + c * 3 + d * 4
        return first + e * 5 + f * 6 + g * 7 + h * 8
    }
    let narrow8 = { @Sendable (a: Int8, b: UInt16, c: Int32, d: Int64, e: Float, f: Double, g: UInt8, p: UnsafeMutableRawPointer?) -> Int8 in
        let integers: Int64 = Int64(a) &* 3 &+ Int64(b) &* 5 &+ Int64(c) &* 7 &+ d &+ Int64(g) &* 11
        return Int8(truncatingIfNeeded: integers &+ Int64(e * 4) &+ Int64(f * 2) &+ Int64(Int(bitPattern: p)))
    }
    let integers8 = { @Sendable (a: Int64, b: Int64, c: Int64, d: Int64, e: Int64, f: Int64, g: Int64, h: Int64) -> Int64 in
        let first: Int64 = a &+ b &* 2 &+ c &* 3 &+ d &* 4
        return first &+ e &* 5 &+ f &* 6 &+ g &* 7 &+ h &* 8
    }
    let pointer = UnsafeMutableRawPointer(bitPattern: 0x40)
    var lines: [String] = []
    for pack in [false, true] {
        let closures = pack
            ? [try packed(mixed7), try packed(doubles8), try packed(narrow8), try packed(integers8)]
            : [try CClosure(mixed7), try CClosure(doubles8), try CClosure(narrow8), try CClosure(integers8)]
        let delegate = DynamicDelegate(protocol: ProtocolDescriptor(name: "many", methods: closures.enumerated().map {
            MethodDescriptor(name: "f\($0.offset)", signature: $0.element.signature)
        }))
        if pack {
            try implementPacked(delegate, "f0", mixed7)
            try implementPacked(delegate, "f1", doubles8)
            try implementPacked(delegate, "f2", narrow8)
            try implementPacked(delegate, "f3", integers8)
        } else {
            try delegate.implement("f0", mixed7)
            try delegate.implement("f1", doubles8)
            try delegate.implement("f2", narrow8)
            try delegate.implement("f3", integers8)
        }
        for policy in [SlotPolicy.nullWhenUnimplemented, .stable] {
            try delegate.setPolicy(policy)
            let slots = (0..<4).map { delegate.table.load(fromByteOffset: $0 * MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self) }
            let made = policy == .stable ? [("stable slot", slots)] : [("closure", closures.map(\.address)), ("slot", slots)]
            for (what, functions) in made {
                func line<R: Equatable>(_ index: Int, _ got: R, _ expected: R) {
                    let name = ["mixed7", "doubles8", "narrow8", "integers8"][index]
                    let kind = ["not a slot", "registers", "libffi"][Int(fx_code_kind(functions[index]))]
                    lines.append("\(name) \(pack ? "pack form" : "fixed arity") \(what) \(kind): "
                        + (got == expected ? "right" : "WRONG \(got), not \(expected)"))
                }
                let f = try functions.enumerated().map { try CFunction(address: $0.element, signature: closures[$0.offset].signature) }
                line(0, try f[0].call(Int32(-70000), 1.5, Int16(-300), Float(0.25), Int64(1) << 40, -2.5, UInt8(250), returning: UInt16.self),
                     mixed7(-70000, 1.5, -300, 0.25, 1 << 40, -2.5, 250))
                line(1, try f[1].call(1.0, -2.0, 3.5, 4.0, -5.0, 6.0, 7.25, -8.0, returning: Double.self), doubles8(1, -2, 3.5, 4, -5, 6, 7.25, -8))
                line(2, try f[2].call(Int8(-3), UInt16(60000), Int32(-70000), Int64(-5_000_000_000), Float(1.5), -2.25, UInt8(200), pointer, returning: Int8.self),
                     narrow8(-3, 60000, -70000, -5_000_000_000, 1.5, -2.25, 200, pointer))
                line(3, try f[3].call(Int64(1), Int64(-2), Int64(3), Int64(-4), Int64(5), Int64(-6), Int64(7), Int64(1) << 50, returning: Int64.self),
                     integers8(1, -2, 3, -4, 5, -6, 7, 1 << 50))
            }
        }
    }
    return lines
}

let arguments = CommandLine.arguments
guard arguments.count == 2, ["table", "mdwe", "fork", "arities"].contains(arguments[1]) else {
    print("usage: delegatekit-trampolines table | mdwe | fork | arities")
    exit(2)
}
if arguments[1] == "arities" {
    for line in try manyParameters() { print(line) }
    exit(0)
}
if arguments[1] == "fork" { forkWhileChurning(forks: 300) }
if arguments[1] == "mdwe" {
    guard fx_forbid_executable_memory() == 0 else {
        print("PR_SET_MDWE refused: errno \(errno)")
        exit(3)
    }
}
for line in try exerciseAndRelease() { print(line) }
fflush(nil)
// A forked child has the table's mappings too (private, copied).
let child = fork()
if child == 0 {
    let again = (try? exerciseAndRelease()) ?? []
    print("child: " + again.joined(separator: " | "))
    fflush(nil)
    _exit(0)
}
var status: Int32 = 0
waitpid(child, &status, 0)
print("child exited \(status)")
