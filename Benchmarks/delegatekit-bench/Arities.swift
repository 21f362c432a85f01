import DelegateKit
import DelegateKitBenchmarkSupport
import Foundation

/// Callbacks of six to twelve parameters (arities.c): past six, a typed closure runs in pack form, and
/// an integer past the fifth makes any signature enter through libffi.
enum Arity: Int32, CaseIterable, Sendable {
    case i64x6, i64x7, sax9, i64x12, f64x6, f64x7

    var label: String {
        switch self {
        case .i64x6: return "int64(int64 × 6)"
        case .i64x7: return "int64(int64 × 7)"
        case .sax9: return "libxml2's startElementNs (9)"
        case .i64x12: return "int64(int64 × 12)"
        case .f64x6: return "double(double × 6)"
        case .f64x7: return "double(double × 7)"
        }
    }

    var parameterCount: Int {
        switch self {
        case .i64x6, .f64x6: return 6
        case .i64x7, .f64x7: return 7
        case .sax9: return 9
        case .i64x12: return 12
        }
    }

    /// The closure of the same kind with six parameters, which the target compares with.
    var sixParameterKin: Arity { self == .f64x7 || self == .f64x6 ? .f64x6 : .i64x6 }

    var signature: CSignature {
        switch self {
        case .i64x6, .i64x7, .i64x12: return CSignature(.int64, Array(repeating: .int64, count: parameterCount))
        case .f64x6, .f64x7: return CSignature(.double, Array(repeating: .double, count: parameterCount))
        case .sax9: return CSignature(.void, [.pointer, .pointer, .pointer, .pointer, .int32, .pointer, .int32, .int32, .pointer])
        }
    }
}

extension PathKind {
    /// The ways into a callback the arity table measures.
    static let arityPaths: [PathKind] = [.direct, .rawLibffi, .closure, .slot, .invocation]
}

/// A path the arity table does not measure (only ``PathKind/arityPaths``).
struct NotMeasured: Error {
    let path: PathKind
}

struct ArityResult {
    let arity: Arity
    let path: PathKind
    var nanoseconds: Double
    var instructions = Double.nan
    var checksumMatches: Bool
}

// The closures, written as a user writes them: each returns its first argument plus its last.
let firstPlusLast6: @Sendable (Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = { a, _, _, _, _, f in a &+ f }
let firstPlusLast7: @Sendable (Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = { a, _, _, _, _, _, g in a &+ g }
let firstPlusLast12: @Sendable (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64) -> Int64 = {
    a, _, _, _, _, _, _, _, _, _, _, l in a &+ l
}
let firstPlusLastF6: @Sendable (Double, Double, Double, Double, Double, Double) -> Double = { a, _, _, _, _, f in a + f }
let firstPlusLastF7: @Sendable (Double, Double, Double, Double, Double, Double, Double) -> Double = { a, _, _, _, _, _, g in a + g }
let startElement: @Sendable (
    UnsafeMutableRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?, UnsafeRawPointer?, Int32, UnsafeRawPointer?, Int32, Int32,
    UnsafeRawPointer?
) -> Void = { context, _, _, _, _, _, attributes, _, list in
    context!.assumingMemoryBound(to: Int64.self).pointee += Int64(attributes) + (list != nil ? 1 : 0)
}

/// One arity's path, ready for its C loop.
final class PreparedArity {
    let arity: Arity
    let path: PathKind
    let function: UnsafeRawPointer
    private let keep: AnyObject?
    private let cleanup: () -> Void

    init(_ arity: Arity, _ path: PathKind) throws {
        self.arity = arity
        self.path = path
        var cleanup: () -> Void = {}
        switch path {
        case .direct:
            function = bench_arity_direct(arity.rawValue)
            keep = nil
        case .rawLibffi:
            var code: UnsafeMutableRawPointer?
            let closure = bench_arity_raw_closure(arity.rawValue, &code)
            function = UnsafeRawPointer(code!)
            keep = nil
            cleanup = { bench_raw_closure_free(closure) }
        case .closure:
            let closure = try Self.closure(arity)
            function = closure.address
            keep = closure
        case .slot:
            let delegate = DynamicDelegate(protocol: ProtocolDescriptor(name: "arity", methods: [MethodDescriptor(name: "f", signature: arity.signature)]))
            try Self.implement(delegate, arity)
            function = delegate.table.load(as: UnsafeRawPointer.self)
            keep = delegate
        case .invocation:
            let closure = try Self.invocationClosure(arity)
            function = closure.address
            keep = closure
        default:
            throw NotMeasured(path: path)
        }
        self.cleanup = cleanup
    }

    deinit { cleanup() }

    @discardableResult
    func run(_ n: Int64) -> Double { bench_arity_loop(arity.rawValue, function, n) }

    static func closure(_ arity: Arity) throws -> CClosure {
        switch arity {
        case .i64x6: return try CClosure(firstPlusLast6)
        case .i64x7: return try CClosure(firstPlusLast7)
        case .sax9: return try CClosure(startElement)
        case .i64x12: return try CClosure(firstPlusLast12)
        case .f64x6: return try CClosure(firstPlusLastF6)
        case .f64x7: return try CClosure(firstPlusLastF7)
        }
    }

    static func implement(_ delegate: DynamicDelegate, _ arity: Arity) throws {
        switch arity {
        case .i64x6: try delegate.implement("f", firstPlusLast6)
        case .i64x7: try delegate.implement("f", firstPlusLast7)
        case .sax9: try delegate.implement("f", startElement)
        case .i64x12: try delegate.implement("f", firstPlusLast12)
        case .f64x6: try delegate.implement("f", firstPlusLastF6)
        case .f64x7: try delegate.implement("f", firstPlusLastF7)
        }
    }

    /// The same computations read through a ``CInvocation``: the signature known only at run time.
    static func invocationClosure(_ arity: Arity) throws -> CClosure {
        let last = arity.parameterCount - 1
        switch arity {
        case .i64x6, .i64x7, .i64x12:
            return try CClosure(signature: arity.signature) { call in
                call.setReturnValue(call.argument(0, as: Int64.self) &+ call.argument(last, as: Int64.self))
            }
        case .f64x6, .f64x7:
            return try CClosure(signature: arity.signature) { call in
                call.setReturnValue(call.argument(0, as: Double.self) + call.argument(last, as: Double.self))
            }
        case .sax9:
            return try CClosure(signature: arity.signature) { call in
                let counter = call.argument(0, as: UnsafeMutableRawPointer?.self)!.assumingMemoryBound(to: Int64.self)
                counter.pointee += Int64(call.argument(6, as: Int32.self)) + (call.argument(8, as: UnsafeRawPointer?.self) != nil ? 1 : 0)
            }
        }
    }
}

enum ArityBenchmark {
    /// Every arity on every path, timed in interleaved rounds; each checksum compared with the direct call's.
    static func measure(calls: Int64, rounds: Int) throws -> [ArityResult] {
        var prepared: [PreparedArity] = []
        for arity in Arity.allCases {
            for path in PathKind.arityPaths { prepared.append(try PreparedArity(arity, path)) }
        }
        let measured = timedAndChecked(count: prepared.count, calls: calls, rounds: rounds, baseline: { index in
            prepared.firstIndex { $0.arity == prepared[index].arity && $0.path == .direct }!
        }) { prepared[$0].run($1) }
        return prepared.indices.map { index in
            ArityResult(arity: prepared[index].arity, path: prepared[index].path, nanoseconds: measured[index].nanoseconds,
                        checksumMatches: measured[index].checksumMatches)
        }
    }

    /// `--measure-arity PATH ARITY N`: one path of one arity, N calls (for callgrind).
    static func measureOne(_ arguments: [String]) {
        guard arguments.count == 3, let path = PathKind.arityPaths.first(where: { $0.key == arguments[0] }),
            let arity = Arity.allCases.first(where: { "\($0)" == arguments[1] }), let n = Int64(arguments[2]),
            let prepared = try? PreparedArity(arity, path)
        else { exit(2) }
        prepared.run(n)
    }

    /// Counts each result's instructions per call with callgrind.
    static func countInstructions(_ results: inout [ArityResult], _ callgrind: Callgrind) {
        for index in results.indices {
            let (path, arity) = (results[index].path, results[index].arity)
            results[index].instructions = callgrind.perUnit { ["--measure-arity", path.key, "\(arity)", String($0)] } ?? .nan
        }
    }
}
