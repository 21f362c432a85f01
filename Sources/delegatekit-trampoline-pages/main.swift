// Runs DelegateKit's closures, slots and stacks on its own trampoline pages, which only release builds
// use (see `RegisterPath.usesOwnPages`): Tests/DelegateKitTests/TrampolinePagesTests.swift builds this
// with `-c release` and checks what it prints.
//
//   delegatekit-trampoline-pages pages   every register trampoline in an own page, and a forked child
//                                        calling them too
//   delegatekit-trampoline-pages mdwe    the same under PR_SET_MDWE (no memory may become executable):
//                                        no own pages, libffi's memory instead, the same results
//   delegatekit-trampoline-pages fork    forks again and again while another thread makes and frees
//                                        trampolines: each child makes, calls and frees one (its page lock
//                                        must not be held by a thread the child does not have)
import CDelegateKitTrampolines
import DelegateKit
import DelegateKitFixtures
import Glibc
import Synchronization

/// Where a register trampoline lives: `own` when its code is an own page's slot (a near jump, byte 11
/// 0xe9, in a read-execute mapping), `libffi` when it is libffi's closure memory.
func home(of address: UnsafeRawPointer) -> String {
    let target = UInt(bitPattern: address)
    for line in contents(of: "/proc/self/maps").split(separator: "\n") {
        let fields = line.split(separator: " ")
        let range = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
        guard range.count == 2, range[0] <= target, target < range[1] else { continue }
        let nearJump = address.load(fromByteOffset: 11, as: UInt8.self) == 0xe9
        return fields[1] == "r-xp" && nearJump ? "own" : "libffi"
    }
    return "unmapped"
}

/// A whole file, read with read(2) (/proc files have no size).
func contents(of path: String) -> String {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return "" }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while case let count = read(descriptor, &buffer, buffer.count), count > 0 { bytes += buffer[..<count] }
    return String(decoding: bytes, as: UTF8.self)
}

/// The closures' answers through C, one line per kind, and where each trampoline lives.
func exercise() throws -> [String] {
    var lines: [String] = []
    let bias = Int64(getpid() > 0 ? 1 : 0)

    // A common shape (its own register entry) through glibc's qsort.
    var numbers: [Int32] = [5, -2, 9, 0, 3]
    let descending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
        let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
        return x < y ? 1 : x > y ? -1 : 0
    }
    descending.withFunctionPointer(as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32).self) {
        qsort(&numbers, numbers.count, 4, $0)
    }
    lines.append("comparator \(home(of: descending.address)): \(numbers)")

    // A generic closure (the shared register entry).
    let add = try CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b &+ bias }
    lines.append("closure \(home(of: add.address)): \(fx_call_i64(add.address, 40, 1))")

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
    withExtendedLifetime((descending, add, delegate, token)) {}
    return lines
}

/// Counts from any thread.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Returns its first argument plus the context's address: the entry the fork check's trampolines enter.
nonisolated let addContext: cffi_register_entry = { i0, _, _, _, _, context, _, _, _, _, _, _, _, _ in
    cffi_registers(integer: i0 &+ UInt64(UInt(bitPattern: context)), sse: 0)
}

/// Makes a trampoline straight from the pages, calls it and frees it: whether it answered right. Only C
/// and a `@convention(c)` entry, nothing of Swift's runtime: what a forked child of a threaded process may do.
nonisolated func makeCallAndFree(_ context: Int) -> Bool {
    var code: UnsafeMutableRawPointer?
    guard let handle = cffi_trampoline_create(addContext, UnsafeMutableRawPointer(bitPattern: context), &code), let code
    else { return false }
    defer { cffi_trampoline_free(handle) }
    return unsafeBitCast(code, to: (@convention(c) (UInt64) -> UInt64).self)(1) == UInt64(context + 1)
}

/// `fork`: a thread churns the page lock while this one forks; a child whose trampoline does not answer
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

let arguments = CommandLine.arguments
guard arguments.count == 2, ["pages", "mdwe", "fork"].contains(arguments[1]) else {
    print("usage: delegatekit-trampoline-pages pages | mdwe | fork")
    exit(2)
}
if arguments[1] == "fork" { forkWhileChurning(forks: 300) }
if arguments[1] == "mdwe" {
    guard fx_forbid_executable_memory() == 0 else {
        print("PR_SET_MDWE refused: errno \(errno)")
        exit(3)
    }
}
for line in try exercise() { print(line) }
fflush(nil)
// A forked child has the pages too (private mappings, copied).
let child = fork()
if child == 0 {
    let again = (try? exercise()) ?? []
    print("child: " + again.joined(separator: " | "))
    fflush(nil)
    _exit(0)
}
var status: Int32 = 0
waitpid(child, &status, 0)
print("child exited \(status)")
