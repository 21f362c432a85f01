import Glibc

/// The arguments C passed a variadic closure after its fixed ones (the `...` of
/// `void (*)(void *ctx, const char *msg, ...)`): read them in order with ``next(_:)``, or hand them to a
/// C function that takes a `va_list` with ``withVaList(_:)``, such as `vsnprintf`, or format them as a
/// `printf` format says with ``formatted(_:)``.
///
/// ```swift
/// let handler = try CClosure { (context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
///     log(arguments.formatted(format!))
/// }
/// ```
///
/// Valid only during the call it was passed to, on its thread (it points into the call's frame). C does
/// not say how many arguments it passed, nor their types: read exactly what the fixed arguments say (a
/// format, a count). Reading more reads whatever the registers or the caller's stack hold.
public struct CVariadicArguments {
    /// The call's frame: the registers' values, the stack's address and the reader (`CDelegateKitLibffi/Libffi.h`).
    let frame: UnsafeMutableRawPointer

    init(frame: UnsafeMutableRawPointer) {
        self.frame = frame
    }

    /// Calls `body` with a `va_list` at the first variadic argument, for a C function such as `vsnprintf`
    /// or `vsyslog`. Each call starts from the first argument again, whatever ``next(_:)`` has read.
    public func withVaList<R>(_ body: (CVaListPointer) throws -> R) rethrows -> R {
        try LibffiShim.withVaList(frame, body)
    }

    /// The arguments formatted as the `printf` format `format` says (by `vsnprintf`).
    public func formatted(_ format: UnsafePointer<CChar>) -> String {
        let count = withVaList { vsnprintf(nil, 0, format, $0) }
        guard count > 0 else { return "" }
        var buffer = [CChar](repeating: 0, count: Int(count) + 1)
        _ = withVaList { list in buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, list) } }
        return String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The next variadic argument, read as a `T` (the first call reads the first argument after the fixed
    /// ones).
    ///
    /// C promotes what it passes after `...`: a `char`, `short` or `bool` arrives as an `int` (read
    /// `Int32`) and a `float` as a `double` (read `Double`). Asking for a narrower type, or a struct, stops
    /// the program with a message, as a wrong read would return garbage.
    public func next<T: CValue>(_ type: T.Type = T.self) -> T {
        withUnsafeTemporaryAllocation(byteCount: 16, alignment: 16) { buffer in
            let slot = buffer.baseAddress.unsafelyUnwrapped
            switch T.cType {
            case .int32, .uint32: slot.storeBytes(of: LibffiShim.nextVariadicInt(frame), as: Int32.self)
            case .int64, .uint64, .size: slot.storeBytes(of: LibffiShim.nextVariadicLongLong(frame), as: Int64.self)
            case .double: slot.storeBytes(of: LibffiShim.nextVariadicDouble(frame), as: Double.self)
            case .pointer: slot.storeBytes(of: LibffiShim.nextVariadicPointer(frame), as: UnsafeMutableRawPointer?.self)
            #if arch(x86_64)
            case .longDouble: slot.storeBytes(of: LibffiShim.nextVariadicLongDouble(frame), as: Float80.self)
            #endif
            case .bool, .int8, .uint8, .int16, .uint16:
                misuse("C passes `\(T.cType)` after `...` as an int: read Int32, not \(T.self) (CVariadicArguments.next)")
            case .float:
                misuse("C passes `float` after `...` as a double: read Double, not \(T.self) (CVariadicArguments.next)")
            default:
                misuse("CVariadicArguments.next reads integers, pointers and double, not `\(T.cType)` (\(T.self))")
            }
            return slot.load(as: T.self)
        }
    }
}

@available(*, unavailable, message: "CVariadicArguments points into its call's frame: use it only during the call")
extension CVariadicArguments: Sendable {}
