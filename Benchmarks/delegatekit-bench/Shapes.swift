import DelegateKitBenchmarkSupport
import DelegateKit
import Foundation

/// The callback shapes C libraries use most, each called by a C loop the way such a library calls it.
enum CallbackShape: Int32, CaseIterable, Sendable {
    case comparator, destroy, context, threadStart, busy, foreach

    var label: String {
        switch self {
        case .comparator: return "int (const void *, const void *)"
        case .destroy: return "void (void *)"
        case .context: return "int (void *)"
        case .threadStart: return "void *(void *)"
        case .busy: return "int (void *, int)"
        case .foreach: return "void (void *, void *)"
        }
    }

    var cSignature: CSignature {
        switch self {
        case .comparator: return CSignature(.int32, [.pointer, .pointer])
        case .destroy: return CSignature(.void, [.pointer])
        case .context: return CSignature(.int32, [.pointer])
        case .threadStart: return CSignature(.pointer, [.pointer])
        case .busy: return CSignature(.int32, [.pointer, .int32])
        case .foreach: return CSignature(.void, [.pointer, .pointer])
        }
    }
}

/// How a shape's function is reached.
enum ShapePath: String, CaseIterable, Sendable {
    case direct = "direct C call"
    case closure = "CClosure, capturing literal"
    case genericClosure = "CClosure, literal through a generic function"
    case slot = "DynamicDelegate slot, capturing literal"

    var key: String { String(describing: self) }
}

/// One shape reached one way, ready for the C loop.
final class PreparedShape {
    let path: ShapePath
    let shape: CallbackShape
    let function: UnsafeRawPointer
    private let keepAlive: AnyObject?

    init(_ path: ShapePath, _ shape: CallbackShape) throws {
        self.path = path
        self.shape = shape
        // Zero at run time, which the compiler cannot see: every closure captures it, as users' closures
        // capture their state.
        let bias = bench_opaque_zero()
        switch path {
        case .direct:
            function = bench_shape_direct(shape.rawValue)
            keepAlive = nil
        case .closure:
            let closure = try capturingLiteral(shape, bias)
            function = closure.address
            keepAlive = closure
        case .genericClosure:
            let closure = try throughGenericFunction(shape, bias)
            function = closure.address
            keepAlive = closure
        case .slot:
            let delegate = DynamicDelegate(protocol: ProtocolDescriptor(
                name: "shape", methods: [MethodDescriptor(name: "f", signature: shape.cSignature)]))
            try implementCapturingLiteral(delegate, shape, bias)
            function = delegate.table.load(as: UnsafeRawPointer.self)
            keepAlive = delegate
        }
    }

    @discardableResult
    func run(_ n: Int64) -> Int64 { bench_shape_loop(shape.rawValue, function, n) }
}

// The same closures, written out where each is used, as a user writes them: a literal is compiled for the
// function type of the parameter it is handed to, so each must appear at its call. The slot's subtract
// the zero where the others add it: identical closures would be merged by the optimizer into one that
// the other jumps to, which no user's program has.

private func capturingLiteral(_ shape: CallbackShape, _ bias: Int64) throws -> CClosure {
    switch shape {
    case .comparator:
        return try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a.unsafelyUnwrapped.load(as: Int32.self) &+ Int32(truncatingIfNeeded: bias)
            let y = b.unsafelyUnwrapped.load(as: Int32.self)
            return x > y ? 1 : x < y ? -1 : 0
        }
    case .destroy:
        return try CClosure { (p: UnsafeMutableRawPointer?) in
            p.unsafelyUnwrapped.storeBytes(of: p.unsafelyUnwrapped.load(as: Int64.self) &+ 1 &+ bias, as: Int64.self)
        }
    case .context:
        return try CClosure { (p: UnsafeMutableRawPointer?) -> Int32 in
            p.unsafelyUnwrapped.load(as: Int32.self) &+ 1 &+ Int32(truncatingIfNeeded: bias)
        }
    case .threadStart:
        return try CClosure { (p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in p.map { $0 + Int(bias) } }
    case .busy:
        return try CClosure { (p: UnsafeMutableRawPointer?, count: Int32) -> Int32 in
            count &+ (p != nil ? 1 : 0) &+ Int32(truncatingIfNeeded: bias)
        }
    case .foreach:
        return try CClosure { (element: UnsafeMutableRawPointer?, context: UnsafeMutableRawPointer?) in
            let sum = context.unsafelyUnwrapped.load(as: Int64.self) &+ element.unsafelyUnwrapped.load(as: Int64.self)
            context.unsafelyUnwrapped.storeBytes(of: sum &+ bias, as: Int64.self)
        }
    }
}

private func implementCapturingLiteral(_ delegate: DynamicDelegate, _ shape: CallbackShape, _ bias: Int64) throws {
    switch shape {
    case .comparator:
        try delegate.implement("f") { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a.unsafelyUnwrapped.load(as: Int32.self) &- Int32(truncatingIfNeeded: bias)
            let y = b.unsafelyUnwrapped.load(as: Int32.self)
            return x > y ? 1 : x < y ? -1 : 0
        }
    case .destroy:
        try delegate.implement("f") { (p: UnsafeMutableRawPointer?) in
            p.unsafelyUnwrapped.storeBytes(of: p.unsafelyUnwrapped.load(as: Int64.self) &+ 1 &- bias, as: Int64.self)
        }
    case .context:
        try delegate.implement("f") { (p: UnsafeMutableRawPointer?) -> Int32 in
            p.unsafelyUnwrapped.load(as: Int32.self) &+ 1 &- Int32(truncatingIfNeeded: bias)
        }
    case .threadStart:
        try delegate.implement("f") { (p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in p.map { $0 - Int(bias) } }
    case .busy:
        try delegate.implement("f") { (p: UnsafeMutableRawPointer?, count: Int32) -> Int32 in
            count &+ (p != nil ? 1 : 0) &- Int32(truncatingIfNeeded: bias)
        }
    case .foreach:
        try delegate.implement("f") { (element: UnsafeMutableRawPointer?, context: UnsafeMutableRawPointer?) in
            let sum = context.unsafelyUnwrapped.load(as: Int64.self) &+ element.unsafelyUnwrapped.load(as: Int64.self)
            context.unsafelyUnwrapped.storeBytes(of: sum &- bias, as: Int64.self)
        }
    }
}

// A wrapper generic over the closure's types, as code generic over its callbacks is: the generic
// overloads receive the closure from a generic context, and still find the shape's entry by its types.
private func generic<A0: CValue, R: CValue>(_ body: @escaping @Sendable (A0) -> R) throws -> CClosure { try CClosure(body) }
private func generic<A0: CValue>(_ body: @escaping @Sendable (A0) -> Void) throws -> CClosure { try CClosure(body) }
private func generic<A0: CValue, A1: CValue, R: CValue>(_ body: @escaping @Sendable (A0, A1) -> R) throws -> CClosure {
    try CClosure(body)
}
private func generic<A0: CValue, A1: CValue>(_ body: @escaping @Sendable (A0, A1) -> Void) throws -> CClosure { try CClosure(body) }

private func throughGenericFunction(_ shape: CallbackShape, _ bias: Int64) throws -> CClosure {
    switch shape {
    case .comparator:
        return try generic { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a.unsafelyUnwrapped.load(as: Int32.self) &+ Int32(truncatingIfNeeded: bias)
            let y = b.unsafelyUnwrapped.load(as: Int32.self)
            return x > y ? 1 : x < y ? -1 : 0
        }
    case .destroy:
        return try generic { (p: UnsafeMutableRawPointer?) in
            p.unsafelyUnwrapped.storeBytes(of: p.unsafelyUnwrapped.load(as: Int64.self) &+ 1 &+ bias, as: Int64.self)
        }
    case .context:
        return try generic { (p: UnsafeMutableRawPointer?) -> Int32 in
            p.unsafelyUnwrapped.load(as: Int32.self) &+ 1 &+ Int32(truncatingIfNeeded: bias)
        }
    case .threadStart:
        return try generic { (p: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? in p.map { $0 + Int(bias) } }
    case .busy:
        return try generic { (p: UnsafeMutableRawPointer?, count: Int32) -> Int32 in
            count &+ (p != nil ? 1 : 0) &+ Int32(truncatingIfNeeded: bias)
        }
    case .foreach:
        return try generic { (element: UnsafeMutableRawPointer?, context: UnsafeMutableRawPointer?) in
            let sum = context.unsafelyUnwrapped.load(as: Int64.self) &+ element.unsafelyUnwrapped.load(as: Int64.self)
            context.unsafelyUnwrapped.storeBytes(of: sum &+ bias, as: Int64.self)
        }
    }
}

/// One shape's path: its median time, and instructions once counted.
struct ShapeResult {
    let path: ShapePath
    let shape: CallbackShape
    var nanoseconds: Double
    var instructions: Double? = nil
    var checksumMatches: Bool
}

enum ShapeBenchmark {
    /// `--measure-shape PATH SHAPE N`: one path run N times, for callgrind.
    static func measureOne(_ arguments: [String]) {
        guard arguments.count == 3, let path = ShapePath.allCases.first(where: { $0.key == arguments[0] }),
            let shape = CallbackShape.allCases.first(where: { "\($0)" == arguments[1] }), let n = Int64(arguments[2]),
            let prepared = try? PreparedShape(path, shape)
        else { exit(2) }
        prepared.run(n)
    }

    /// Every path of every shape, in interleaved rounds.
    static func measure(calls: Int64, rounds: Int) throws -> [ShapeResult] {
        var prepared: [PreparedShape] = []
        for shape in CallbackShape.allCases {
            for path in ShapePath.allCases { prepared.append(try PreparedShape(path, shape)) }
        }
        let measured = timedAndChecked(count: prepared.count, calls: calls, rounds: rounds, baseline: { index in
            prepared.firstIndex { $0.shape == prepared[index].shape && $0.path == .direct }!
        }) { prepared[$0].run($1) }
        return prepared.indices.map { index in
            ShapeResult(path: prepared[index].path, shape: prepared[index].shape, nanoseconds: measured[index].nanoseconds,
                        checksumMatches: measured[index].checksumMatches)
        }
    }
}
