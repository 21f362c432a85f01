/// How a variadic signature is laid out for libffi, whose closures take a fixed list of arguments: the
/// fixed arguments, then an `int64_t` for each integer register and a vector-register argument for each
/// vector register they leave free (as wide as a variadic argument there may be: a `double` on x86_64, a
/// `long double`, which AAPCS64 passes in a whole q register, on aarch64), then ``stackWords`` `int64_t`s the caller's stack holds. libffi then hands the closure
/// the free registers' values and the address of the stack's arguments, which is where a variadic callee
/// finds the arguments after its fixed ones (`CDelegateKitLibffi/Libffi.h` says more).
///
/// The same layout passes a call on: a slot's original, its forwarding target, or what a stale stub's
/// slot holds now is called with the registers as they came and the first ``stackWords`` words of the
/// stack's arguments, which is what the callee's `va_arg` reads, up to that many words on the stack.
///
/// So the fixed arguments must travel in registers: integers, pointers, `float` and `double`, as many as
/// the registers hold. A caller that passes fewer variadic arguments leaves the other registers as they
/// were, and the closure reads only what the format or count it was given says.
struct VariadicLayout: Sendable {
    /// How many words of a variadic call's stack arguments a call passed on carries. Beyond the ones the
    /// caller passed, they are the caller's own frame, read and passed but never used; 16 words are far
    /// less than any caller's frames above its call (a thread's first frame and its descriptor alone are more).
    static let stackWords = 16

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
        integersUsed = integers
        vectorsUsed = vectors
        padded = CSignature(
            fixed.returnType,
            fixed.argumentTypes + Array(repeating: .int64, count: registers.integers - integers)
                + Array(repeating: LibffiShim.variadicVectorBytes == 16 ? .longDouble : .double, count: registers.vectors - vectors) + Array(repeating: .int64, count: Self.stackWords))
    }
}
