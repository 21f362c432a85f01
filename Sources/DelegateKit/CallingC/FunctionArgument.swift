/// What a value passed where C takes a function pointer is, found at run time: the forms of
/// ``CFunction``'s calls that take any value there (a `@convention(c)` function type cannot conform to a
/// protocol, so no compile-time constraint admits it next to ``CValue``s).
enum FunctionArgument {
    /// A closure: its address, valid while the closure lives.
    case closure(CClosure)
    /// Code that stays: a C function (a `@convention(c)` value, nil for an optional one that is nil, or a
    /// ``CFunction``'s address).
    case address(UnsafeRawPointer?)

    /// Nil when `value` has no C address (a Swift closure, a number, a string).
    init?<F>(_ value: F) {
        if let closure = value as? CClosure {
            self = .closure(closure)
        } else if let function = value as? CFunction {
            self = .address(function.address)
        } else if FunctionPointerType.isCFunctionPointer(F.self) {
            self = .address(UnsafeRawPointer(bitPattern: unsafeBitCast(value, to: UInt.self)))
        } else if F.self == CClosure?.self || F.self == CFunction?.self {
            self = .address(nil)  // a nil optional: the casts above unwrap one that holds something
        } else {
            return nil
        }
    }

    var address: UnsafeRawPointer? {
        switch self {
        case .closure(let closure): return closure.address
        case .address(let address): return address
        }
    }
}
