/// A C type as it travels by value through a function call: a scalar, a pointer, or a structure.
///
/// `CType` describes layout and calling convention, not spelling: `size_t` and `unsigned long` are both
/// ``uint64`` on LP64 Linux, `char` is ``int8``, and every pointer is ``pointer`` whatever it points to.
/// The one spelling kept, ``size-enum.case``, is sugar that equality, hashing and layout ignore: `.size == .uint64`.
public enum CType: Hashable, Sendable {
    /// `void`: valid only as a return type.
    case void
    /// C's `_Bool` / `bool`: one byte, distinct from `uint8_t`.
    case bool
    /// `int8_t` (and `char`, `signed char`).
    case int8
    /// `uint8_t` (and `unsigned char`).
    case uint8
    /// `int16_t` (and `short`).
    case int16
    /// `uint16_t` (and `unsigned short`).
    case uint16
    /// `int32_t` (and `int`, `enum`s).
    case int32
    /// `uint32_t` (and `unsigned`).
    case uint32
    /// `int64_t` (and `long`, `long long`, `ssize_t`, `off_t` on LP64).
    case int64
    /// `uint64_t` (and `unsigned long`).
    case uint64
    /// `__int128` (`__int128_t`): Swift's `Int128`. Only where the libffi in use passes it (3.6 and later).
    case int128
    /// `unsigned __int128` (`__uint128_t`): Swift's `UInt128`.
    case uint128
    /// `size_t`: the same C type as ``uint64`` on LP64 (equal to it, with the same hash and layout), kept
    /// as a spelling for one reason: Swift imports `size_t` as `Int`, so a closure may take or return
    /// `Int` or `UInt` where C says `size_t` (see ``accepts(_:)``), though not where C says `uint64_t`.
    case size
    /// `float`.
    case float
    /// `double`.
    case double
    /// `long double`: Swift's `Float80` on x86_64.
    case longDouble
    /// `float _Complex`: two `float`s, the real part first (``CComplex``).
    case complexFloat
    /// `double _Complex`: two `double`s, the real part first (``CComplex``).
    case complexDouble
    /// `long double _Complex`: two `long double`s, the real part first. On x86_64 a function returns it in
    /// the x87 registers, as no structure of the same layout would come back.
    case complexLongDouble
    /// Any data or function pointer.
    case pointer
    /// A structure passed by value, members in declaration order, laid out by C's rules.
    case structure([CType])

    /// The size in bytes, as C's `sizeof` gives it on this platform.
    @inlinable
    public var size: Int { layout.size }

    /// The alignment in bytes, as C's `_Alignof` gives it on this platform.
    @inlinable
    public var alignment: Int { layout.alignment }

    /// Size and alignment together. Inlinable so that for a known scalar both are compile-time constants.
    @inlinable
    var layout: (size: Int, alignment: Int) {
        switch self {
        case .void: return (0, 1)
        case .bool, .int8, .uint8: return (1, 1)
        case .int16, .uint16: return (2, 2)
        case .int32, .uint32, .float: return (4, 4)
        case .int64, .uint64, .size, .double: return (8, 8)
        case .int128, .uint128: return (16, 16)
        case .pointer: return (MemoryLayout<UnsafeRawPointer>.size, MemoryLayout<UnsafeRawPointer>.alignment)
        // long double is the 80-bit x87 format padded to 16 bytes on x86_64, and IEEE quad on arm64 Linux.
        case .longDouble: return (16, 16)
        // C11 6.2.5: a complex type has the layout of an array of two of its real type.
        case .complexFloat: return (8, 4)
        case .complexDouble: return (16, 8)
        case .complexLongDouble: return (32, 16)
        case .structure(let members):
            let layout = CType.structureLayout(members)
            return (layout.size, layout.alignment)
        }
    }

    /// The byte offset of each member of a ``structure(_:)``; empty for every other type.
    public var memberOffsets: [Int] {
        guard case .structure(let members) = self else { return [] }
        return CType.structureLayout(members).offsets
    }

    /// Whether a value of C type `other` may be passed where C declares this type: the types are the
    /// same, or one is `size_t` and the other a 64-bit integer of either sign (Swift's `Int` is how
    /// Swift itself imports `size_t`). Signedness is otherwise part of the type: `int` does not accept
    /// `unsigned`, nor `uint64_t` `Int`.
    public func accepts(_ other: CType) -> Bool {
        // Case by case rather than a switch on the pair, which copies both values (and counts a
        // reference for a structure's members) on every implement's check.
        if case .structure(let mine) = self {
            guard case .structure(let theirs) = other, mine.count == theirs.count else { return false }
            return mine.indices.allSatisfy { mine[$0].accepts(theirs[$0]) }
        }
        if case .structure = other { return false }
        // `size_t` is `uint64_t` by identity; as Swift imports it as `Int`, it accepts `int64_t` too.
        return identity == other.identity || isSizeAndInt64(self, other) || isSizeAndInt64(other, self)
    }

    private func isSizeAndInt64(_ a: CType, _ b: CType) -> Bool {
        if case .size = a, case .int64 = b { return true }
        return false
    }

    /// Whether two types are the same C type: `size_t` is `uint64_t`, as C and Python's cffi say on LP64.
    public static func == (lhs: CType, rhs: CType) -> Bool {
        switch (lhs, rhs) {
        case (.structure(let mine), .structure(let theirs)): return mine == theirs
        case (.structure, _), (_, .structure): return false
        default: return lhs.identity == rhs.identity
        }
    }

    /// Hashes the C type, not its spelling, as `==` compares it.
    public func hash(into hasher: inout Hasher) {
        if case .structure(let members) = self {
            hasher.combine(members)
        } else {
            hasher.combine(identity)
        }
    }

    /// The scalar's code with `size_t` folded into `uint64_t`, and codes past the scalars' four bits for the
    /// types that take the structures' way through a call; 0 for a structure.
    private var identity: UInt64 {
        switch self {
        case .size: return CType.uint64.scalarCode ?? 0
        case .complexFloat: return 16
        case .complexDouble: return 17
        case .complexLongDouble: return 18
        case .int128: return 19
        case .uint128: return 20
        default: return scalarCode ?? 0
        }
    }

    /// A signature key with this type appended: four bits per scalar type, nil once a structure (or
    /// too many types) makes the signature one to look up the slow way.
    @inlinable
    func appendingKey(_ key: UInt64?) -> UInt64? {
        guard let key, key >> 60 == 0, let code = scalarCode else { return nil }
        return key << 4 | code
    }

    @inlinable
    var scalarCode: UInt64? {
        switch self {
        case .void: return 1
        case .bool: return 2
        case .int8: return 3
        case .uint8: return 4
        case .int16: return 5
        case .uint16: return 6
        case .int32: return 7
        case .uint32: return 8
        case .int64: return 9
        case .uint64: return 10
        case .size: return 11
        case .float: return 12
        case .double: return 13
        case .longDouble: return 14
        case .pointer: return 15
        // Rare enough to take the structures' way: found by the slow lookup, passed by libffi.
        case .int128, .uint128, .complexFloat, .complexDouble, .complexLongDouble, .structure: return nil
        }
    }

    /// Whether this is an integer (or `bool`) type narrower than a register, which libffi widens.
    @inlinable
    var widening: ReturnWidening {
        switch self {
        case .int8: return .signExtend8
        case .int16: return .signExtend16
        case .int32: return .signExtend32
        case .bool, .uint8: return .zeroExtend8
        case .uint16: return .zeroExtend16
        case .uint32: return .zeroExtend32
        default: return .none
        }
    }

    /// C's rule: each member at the next multiple of its alignment; the whole padded to the largest.
    @usableFromInline
    static func structureLayout(_ members: [CType]) -> (offsets: [Int], size: Int, alignment: Int) {
        var offset = 0
        var alignment = 1
        var offsets: [Int] = []
        offsets.reserveCapacity(members.count)
        for member in members {
            let a = member.alignment
            offset = (offset + a - 1) / a * a
            offsets.append(offset)
            offset += member.size
            alignment = max(alignment, a)
        }
        let size = (offset + alignment - 1) / alignment * alignment
        return (offsets, size, alignment)
    }
}

extension CType: CustomStringConvertible {
    /// The type spelled the way a C programmer reads it: `int32_t`, `void *`, `struct { uint8_t; double; }`.
    public var description: String {
        switch self {
        case .void: return "void"
        case .bool: return "bool"
        case .int8: return "int8_t"
        case .uint8: return "uint8_t"
        case .int16: return "int16_t"
        case .uint16: return "uint16_t"
        case .int32: return "int32_t"
        case .uint32: return "uint32_t"
        case .int64: return "int64_t"
        case .uint64: return "uint64_t"
        case .int128: return "__int128"
        case .uint128: return "unsigned __int128"
        case .size: return "size_t"
        case .float: return "float"
        case .double: return "double"
        case .longDouble: return "long double"
        case .complexFloat: return "float _Complex"
        case .complexDouble: return "double _Complex"
        case .complexLongDouble: return "long double _Complex"
        case .pointer: return "void *"
        case .structure(let members):
            return "struct { " + members.map { "\($0.description); " }.joined() + "}"
        }
    }
}
