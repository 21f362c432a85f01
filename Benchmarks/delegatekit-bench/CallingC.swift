import DelegateKitBenchmarkSupport
import DelegateKit
import Glibc

/// Calling C from Swift: the same C function called directly (Swift imports it), through a `CFunction`
/// with typed arguments (a direct call in registers where the register path exists; eight arguments go
/// through libffi), with run-time values (libffi's `ffi_call`), and raw `ffi_call` from C; and a variadic
/// function through a `CFunction`, typed and with run-time values.
enum CallingC {
    enum Kind: String, CaseIterable {
        case direct = "direct Swift call of the imported function"
        case rawFFICall = "raw libffi ffi_call, from C"
        case typed = "CFunction.call, typed"
        case typed8 = "CFunction.call, typed, 8 arguments (libffi)"
        case runTime = "CFunction.call, run-time values"
        case rawFFICallVariadic = "raw libffi ffi_call, from C, variadic (2 int64 after the count)"
        case variadic = "CFunction.call, variadic (2 int64 after the count)"
        case runTimeVariadic = "CFunction.call, run-time values, variadic"
        case rawFFICallStruct = "raw libffi ffi_call, from C, struct32(struct32)"
        case typedStruct = "CFunction.call, typed, struct32(struct32)"

        var key: String { String(describing: self) }
    }

    struct Result {
        let kind: Kind
        var nanoseconds: Double
        var instructions: Double?
    }

    /// Runs `kind`'s loop of `n` calls, each feeding its result into the next; returns the last result.
    static func run(_ kind: Kind, _ n: Int64) throws -> Int64 {
        var accumulator: Int64 = 0
        switch kind {
        case .direct:
            for _ in 0..<n { accumulator = bench_add_i64(accumulator, 1) }
        case .rawFFICall:
            accumulator = bench_ffi_call_i64(n)
        case .typed:
            let add = try CFunction(address: addAddress, signature: CSignature(.int64, [.int64, .int64]), name: "bench_add_i64")
            for _ in 0..<n { accumulator = try add.call(accumulator, Int64(1)) }
        case .typed8:
            let add8 = try CFunction(
                address: unsafeBitCast(bench_add8_i64 as @convention(c) (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64,
                                       to: UnsafeRawPointer.self),
                signature: CSignature(.int64, Array(repeating: .int64, count: 8)), name: "bench_add8_i64")
            let zero: Int64 = 0
            for _ in 0..<n { accumulator = try add8.call(accumulator, Int64(1), zero, zero, zero, zero, zero, zero) }
        case .runTime:
            let add = try CFunction(address: addAddress, signature: CSignature(.int64, [.int64, .int64]), name: "bench_add_i64")
            for _ in 0..<n {
                guard case .signed(let sum) = try add.call([.signed(accumulator), .signed(1)]) else { return -1 }
                accumulator = sum
            }
        case .rawFFICallVariadic:
            accumulator = bench_ffi_call_variadic(n)
        case .variadic:
            let sum = try CFunction(address: sumAddress, declaration: "int64_t (int, ...)", name: "bench_sum_variadic")
            for _ in 0..<n { accumulator = try sum.call(Int32(2), accumulator, Int64(1)) }
        case .runTimeVariadic:
            let sum = try CFunction(address: sumAddress, declaration: "int64_t (int, ...)", name: "bench_sum_variadic")
            for _ in 0..<n {
                guard case .signed(let total) = try sum.call([.signed(2), .signed(accumulator), .signed(1)], variadicTypes: [.int64, .int64])
                else { return -1 }
                accumulator = total
            }
        case .rawFFICallStruct:
            accumulator = bench_ffi_call_s32(n)
        case .typedStruct:
            let rotate = try CFunction(
                address: unsafeBitCast(bench_rotate_s32 as @convention(c) (bench_s32) -> bench_s32, to: UnsafeRawPointer.self),
                signature: CSignature(bench_s32.cType, [bench_s32.cType]), name: "bench_rotate_s32")
            var s = bench_s32(a: 0, b: 0, c: 0, d: 0)
            for _ in 0..<n { s = try rotate.call(s) }
            accumulator = Int64(s.a + s.b + s.c + s.d)
        }
        return accumulator
    }

    private static var addAddress: UnsafeRawPointer {
        unsafeBitCast(bench_add_i64 as @convention(c) (Int64, Int64) -> Int64, to: UnsafeRawPointer.self)
    }

    /// Swift does not import the variadic function, and the executable does not export it for dlsym.
    private static var sumAddress: UnsafeRawPointer { bench_sum_variadic_address() }

    /// The median ns per call of each kind over `rounds` interleaved rounds.
    static func measure(calls: Int64, rounds: Int) throws -> [Result] {
        var samples: [Kind: [Double]] = [:]
        for _ in 0..<rounds {
            for kind in Kind.allCases {
                let start = bench_now()
                let result = try run(kind, calls)
                samples[kind, default: []].append(Double(bench_now() - start) / Double(calls))
                guard result == calls else { throw CallingCError.wrongResult(kind, result) }
            }
        }
        return Kind.allCases.map { Result(kind: $0, nanoseconds: median(samples[$0] ?? [])) }
    }

    enum CallingCError: Error {
        case wrongResult(Kind, Int64)
    }

    /// `--measure-calling KIND N`, for callgrind.
    static func measureOne(_ arguments: [String]) {
        guard arguments.count == 2, let kind = Kind.allCases.first(where: { $0.key == arguments[0] }), let n = Int64(arguments[1]),
            (try? run(kind, n)) == n
        else { exit(2) }
    }
}
