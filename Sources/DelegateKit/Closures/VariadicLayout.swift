/// How a variadic closure is laid out for libffi, whose closures take a fixed list of arguments: the
/// fixed arguments, then an `int64_t` for each integer register and a `double` for each vector register
/// they leave free, then one `int64_t` the caller's stack holds. libffi then hands the closure the free
/// registers' values and the address of the stack's arguments, which is where a variadic callee finds the
/// arguments after its fixed ones (`CDelegateKitLibffi.h` says more).
///
/// So the fixed arguments must travel in registers: integers, pointers, `float` and `double`, as many as
/// the registers hold. A caller that passes fewer variadic arguments leaves the other registers as they
/// were, and the closure reads only what the format or count it was given says.
struct VariadicLayout: Sendable {
    /// The signature C sees, without the `...`.
    let fixed: CSignature
    /// The signature libffi's closure is prepared with.
    let padded: CSignature
    /// The registers the fixed arguments take.
    let integersUsed: Int
    let vectorsUsed: Int

    init(_ fixed: CSignature) throws {
        var integers = 0
        var vectors = 0
        for (index, type) in fixed.argumentTypes.enumerated() {
            switch type {
            case .bool, .int8, .uint8, .int16, .uint16, .int32, .uint32, .int64, .uint64, .size, .pointer: integers += 1
            case .float, .double: vectors += 1
            default:
                throw DelegateError.invalidSignature(
                    fixed, reason: "argument \(index + 1) of a variadic closure is `\(type)`: its arguments before `...` "
                        + "may be integers, pointers, float or double")
            }
        }
        switch fixed.returnType {
        case .void, .bool, .int8, .uint8, .int16, .uint16, .int32, .uint32, .int64, .uint64, .size, .pointer, .float, .double: break
        default:
            throw DelegateError.invalidSignature(
                fixed, reason: "a variadic closure returns `\(fixed.returnType)`: it may return void, an integer, a pointer, "
                    + "float or double")
        }
        let registers = LibffiShim.variadicRegisters
        guard integers <= registers.integers, vectors <= registers.vectors else {
            throw DelegateError.invalidSignature(
                fixed, reason: "a variadic closure's arguments before `...` must fit in \(registers.integers) integer "
                    + "and \(registers.vectors) vector registers")
        }
        self.fixed = fixed
        integersUsed = integers
        vectorsUsed = vectors
        padded = CSignature(
            fixed.returnType,
            fixed.argumentTypes + Array(repeating: .int64, count: registers.integers - integers)
                + Array(repeating: .double, count: registers.vectors - vectors) + [.int64])
    }
}
