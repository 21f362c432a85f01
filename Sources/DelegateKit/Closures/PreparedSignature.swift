import Glibc
import Synchronization

/// A `CSignature` prepared for libffi: the `ffi_cif` and the `ffi_type`s it points into.
///
/// libffi requires both to outlive every closure prepared with them, and every distinct signature needs
/// only one, so the prepared signatures in the cache live as long as the process. One made but not
/// cached (a thread that lost the race to prepare it) frees what it allocated when it is dropped.
@usableFromInline
final class PreparedSignature: @unchecked Sendable {  // Immutable after init; libffi only reads the cif.
    @usableFromInline let signature: CSignature
    /// For a call of a variadic function, how many of the arguments are its named ones; nil otherwise.
    /// (libffi prepares each variadic call's argument list on its own.)
    let fixedArgumentCount: Int?
    /// For a ``CSignature/isVariadic`` signature, how its cif pads the fixed arguments (see
    /// ``VariadicLayout``): its closures, the slots of its methods, and the calls they pass on.
    let variadicLayout: VariadicLayout?
    let cif: UnsafeMutablePointer<LibffiShim.CallInterface>
    /// The argument-type array and every structure's `ffi_type` and element array, which the cif points into.
    private let typeStorage: [UnsafeMutableRawPointer]
    /// Where the arguments arrive when closures of this signature take the register path (see
    /// ``RegisterPath``); nil when they enter through libffi.
    let registerLayout: RegisterLayout?
    /// Bytes a result buffer needs: libffi reads and writes narrow integers as a whole register.
    @usableFromInline let resultBufferSize: Int
    /// Whether the result is `float` or `double`, which a register entry returns in its floating form:
    /// worked out once here, where asking the signature for each closure made copied it.
    let returnsFloatingPoint: Bool
    /// How a call with run-time values lays out its arguments (``CFunction/call(_:variadicTypes:)``).
    let runTimeLayout: RunTimeLayout
    /// ``closureEpitaph``'s address once made, else 0.
    private let closureEpitaphAddress = Atomic<UInt>(0)

    /// Whether closures of this signature take the register path.
    @usableFromInline var takesRegisters: Bool { registerLayout != nil }

    /// Keyed by the signature as spelled, not by ``CSignature``'s equality, which takes `size_t` for
    /// `uint64_t`: a closure keeps the spelling it was made with, and ``CInvocation`` lets an `Int` be read
    /// where it says `size_t` but not where it says `uint64_t`.
    private static let cache = Locked<[String: PreparedSignature]>([:])

    /// Signatures of scalars only, by a compact key: read without a lock, an allocation or a hash
    /// function, so making a closure of a common signature costs little more than libffi's own allocation.
    /// Open addressing with linear probing over a power-of-two array; replaced whole when it grows.
    private final class KeyedTable: @unchecked Sendable {  // Immutable once published.
        let entries: [UInt64: PreparedSignature]
        private let keys: UnsafeMutableBufferPointer<UInt64>
        private let values: UnsafeMutableBufferPointer<Unmanaged<PreparedSignature>?>
        private let shift: UInt64

        init(_ entries: [UInt64: PreparedSignature]) {
            self.entries = entries
            var capacity = 16
            while capacity < entries.count * 2 { capacity *= 2 }
            shift = UInt64(64 - capacity.trailingZeroBitCount)
            keys = .allocate(capacity: capacity)
            keys.initialize(repeating: 0)
            values = .allocate(capacity: capacity)
            values.initialize(repeating: nil)
            for (key, value) in entries {
                var index = slot(key)
                while keys[index] != 0 { index = (index + 1) & (capacity - 1) }
                keys[index] = key
                values[index] = .passUnretained(value)  // `entries` keeps it alive
            }
        }

        private func slot(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) }

        func find(_ key: UInt64) -> PreparedSignature? {
            findUnretained(key)?.takeUnretainedValue()
        }

        /// ``find(_:)`` without a retain: published signatures live for ever (`entries`).
        func findUnretained(_ key: UInt64) -> Unmanaged<PreparedSignature>? {
            var index = slot(key)
            while true {
                let stored = keys[index]
                if stored == key { return values[index] }
                if stored == 0 { return nil }  // keys are never 0: every type code is non-zero
                index = (index + 1) & (keys.count - 1)
            }
        }
    }
    /// The newest table's address (as an integer: an atomic pointer cannot be a Swift 6 global).
    private static let keyed = Atomic<UInt>(0)
    /// Every table ever published: a reader may still be looking at an old one, so none is freed.
    private static let keyedTables = Locked<[KeyedTable]>([])

    /// The prepared form of the signature `make` builds, found by `key` (see ``CType/appendingKey(_:)``)
    /// without building it when it was prepared before.
    /// A variadic call's key has a 0 between its named and its variadic types (see
    /// ``CType/variadicKey(_:)``), which no other key has, so the two kinds never collide.
    @inlinable
    static func prepared(
        key: UInt64?, fixedArgumentCount: Int? = nil, _ make: () -> CSignature
    ) throws -> PreparedSignature {
        if let key, let found = lookup(key) { return found }
        return try prepared(make(), fixedArgumentCount: fixedArgumentCount, key: key)
    }

    @usableFromInline
    static func lookup(_ key: UInt64) -> PreparedSignature? {
        guard let table = UnsafeRawPointer(bitPattern: keyed.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<KeyedTable>.fromOpaque(table)._withUnsafeGuaranteedRef { $0.find(key) }
    }

    /// ``lookup(_:)`` with no reference counted on the way (a call of C per lookup): published
    /// signatures live for ever.
    static func lookupUnretained(_ key: UInt64) -> Unmanaged<PreparedSignature>? {
        guard let table = UnsafeRawPointer(bitPattern: keyed.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<KeyedTable>.fromOpaque(table)._withUnsafeGuaranteedRef { $0.findUnretained(key) }
    }

    /// The call interface of the signature with `key`, when prepared before.
    @usableFromInline
    static func lookupCall(_ key: UInt64) -> LibffiCall? {
        lookupUnretained(key)?._withUnsafeGuaranteedRef { $0.libffiCall }
    }

    /// What a call of a deinitialized `CClosure` of this signature prints in a debug build (see
    /// ``Graveyard``): made the first time a closure of it is deinitialized, then kept as long as the
    /// signature, for ever. Once per signature: a message made for each closure as it went was most of
    /// the cost of a closure in a debug build (11,000 instructions of some 28,000 made and freed).
    var closureEpitaph: UnsafePointer<CChar> {
        if let made = UnsafePointer<CChar>(bitPattern: closureEpitaphAddress.load(ordering: .acquiring)) { return made }
        let message = "DelegateKit: a CClosure `\(signature)` was called after it was deinitialized; keep it alive "
            + "for as long as C may call it"
        guard let text = strdup(message) else {
            let unnamed: StaticString = "DelegateKit: a CClosure was called after it was deinitialized"
            return UnsafeRawPointer(unnamed.utf8Start).assumingMemoryBound(to: CChar.self)
        }
        // Two threads may make it at once: the first one stored is every closure's, the other freed.
        let (stored, winner) = closureEpitaphAddress.compareExchange(
            expected: 0, desired: UInt(bitPattern: text), ordering: .acquiringAndReleasing)
        if stored { return UnsafePointer(text) }
        Glibc.free(text)
        return UnsafePointer(bitPattern: winner).unsafelyUnwrapped
    }

    /// What ``call(_:result:arguments:)`` needs, as a value: code that holds it counts no references.
    @usableFromInline
    var libffiCall: LibffiCall { LibffiCall(cif: cif, resultBufferSize: resultBufferSize) }

    @usableFromInline
    static func prepared(_ signature: CSignature, fixedArgumentCount: Int? = nil, key: UInt64?) throws -> PreparedSignature {
        let prepared = try prepared(signature, fixedArgumentCount: fixedArgumentCount)
        if let key {
            keyedTables.withLock { tables in
                var entries = tables.last?.entries ?? [:]
                guard entries[key] == nil else { return }
                entries[key] = prepared
                let table = KeyedTable(entries)
                tables.append(table)
                keyed.store(UInt(bitPattern: Unmanaged.passUnretained(table).toOpaque()), ordering: .releasing)
            }
        }
        return prepared
    }

    /// The key a typed closure of `signature` is published by (see ``CType/appendingKey(_:)``), nil where
    /// a type has no code; a variadic function's calls append theirs to it (``CFunction``).
    static func key(of signature: CSignature) -> UInt64? {
        var key = signature.returnType.scalarCode
        for type in signature.argumentTypes { key = type.appendingKey(key) }
        return key
    }

    /// The shared prepared form of `signature`, made on first use.
    static func prepared(_ signature: CSignature, fixedArgumentCount: Int? = nil) throws -> PreparedSignature {
        // Found by its key first where it has one and a typed closure published it: no spelling is made
        // (a string built for each method of every delegate deinitialized in a debug build, and for every
        // slot published with observers). A variadic signature's keys are its calls'.
        if fixedArgumentCount == nil, !signature.isVariadic, let key = key(of: signature), let found = lookupUnretained(key) {
            return found.takeUnretainedValue()
        }
        // Not `description`, which writes no arguments and a `void` one alike, `(void)`: the one is valid,
        // the other refused, and must stay so whichever was prepared first.
        let spelling = "\(signature.returnType) (" + signature.argumentTypes.map(\.description).joined(separator: ", ")
            + (signature.isVariadic ? ", ...)" : ")")
            + (fixedArgumentCount.map { " variadic after \($0)" } ?? "")
        if let cached = cache.withLock({ $0[spelling] }) { return cached }
        let made = try PreparedSignature(signature, fixedArgumentCount: fixedArgumentCount)
        // Two threads may race to prepare the same signature: the first one stored wins, so every
        // closure of a signature shares one cif, and the other is released here, freeing its memory.
        // (Preparing outside the lock keeps one slow preparation from holding up every other.)
        return cache.withLock { cache in
            if let winner = cache[spelling] { return winner }
            cache[spelling] = made
            return made
        }
    }

    private init(_ signature: CSignature, fixedArgumentCount: Int?) throws {
        try signature.validate()
        self.signature = signature
        resultBufferSize = max(signature.returnType.size, MemoryLayout<UInt64>.size)
        returnsFloatingPoint = signature.returnType == .float || signature.returnType == .double
        self.fixedArgumentCount = fixedArgumentCount
        // Before anything is allocated: a throw here frees nothing.
        let variadicLayout = signature.isVariadic ? try VariadicLayout(signature) : nil
        self.variadicLayout = variadicLayout
        runTimeLayout = RunTimeLayout(signature)
        let cifTypes = variadicLayout?.padded.argumentTypes ?? signature.argumentTypes
        var storage: [UnsafeMutableRawPointer] = []
        let argumentTypes = UnsafeMutablePointer<UnsafeMutablePointer<LibffiShim.TypeDescriptor>?>.allocate(
            capacity: max(cifTypes.count, 1))
        storage.append(UnsafeMutableRawPointer(argumentTypes))
        var missing: CType?
        for (index, type) in cifTypes.enumerated() {
            argumentTypes[index] = PreparedSignature.ffiType(type, storingInto: &storage)
            if argumentTypes[index] == nil { missing = missing ?? type }
        }
        let returnType = PreparedSignature.ffiType(signature.returnType, storingInto: &storage)
        if returnType == nil { missing = missing ?? signature.returnType }
        typeStorage = storage
        // A variadic call passes the number of vector registers it uses in `al`, which the register path's
        // direct call does not set; a variadic closure needs every register libffi saves.
        registerLayout = RegisterPath.isAvailable && fixedArgumentCount == nil && variadicLayout == nil ? RegisterLayout(signature) : nil
        cif = LibffiShim.allocateCallInterface()
        // Every property is set, so a throw below still runs deinit and frees what was allocated.
        guard missing == nil, let returnType else {
            let type = missing ?? signature.returnType
            let remedy = type == .int128 || type == .uint128 ? " (libffi 3.6 and later can, on x86_64 and aarch64)" : ""
            throw DelegateError.invalidSignature(
                signature, reason: "the libffi DelegateKit was built with cannot pass `\(type)` on this platform\(remedy)")
        }
        let status = LibffiShim.prepare(
            cif, fixedCount: fixedArgumentCount, result: returnType, arguments: argumentTypes, count: cifTypes.count)
        guard status == 0 else {
            throw DelegateError.invalidSignature(signature, reason: "libffi refused it (ffi_status \(status))")
        }
    }

    deinit {
        Glibc.free(UnsafeMutableRawPointer(bitPattern: closureEpitaphAddress.load(ordering: .acquiring)))
        runTimeLayout.deallocate()
        LibffiShim.freeCallInterface(cif)
        for pointer in typeStorage { pointer.deallocate() }
    }

    /// libffi's description of `type`, nil when libffi has none. Scalars are libffi's own constants; a
    /// structure's `ffi_type` and element array are allocated here and recorded in `storage`, for the
    /// signature to free.
    private static func ffiType(
        _ type: CType, storingInto storage: inout [UnsafeMutableRawPointer]
    ) -> UnsafeMutablePointer<LibffiShim.TypeDescriptor>? {
        let scalar: LibffiShim.Scalar
        switch type {
        case .void: scalar = .void
        case .bool, .uint8: scalar = .uint8
        case .int8: scalar = .sint8
        case .uint16: scalar = .uint16
        case .int16: scalar = .sint16
        case .uint32: scalar = .uint32
        case .int32: scalar = .sint32
        case .uint64, .size: scalar = .uint64
        case .int64: scalar = .sint64
        case .int128: scalar = .sint128
        case .uint128: scalar = .uint128
        case .float: scalar = .float
        case .double: scalar = .double
        case .longDouble: scalar = .longDouble
        case .complexFloat: scalar = .complexFloat
        case .complexDouble: scalar = .complexDouble
        case .complexLongDouble: scalar = .complexLongDouble
        case .pointer: scalar = .pointer
        case .structure(let members): return structureType(members, storingInto: &storage)
        }
        return LibffiShim.descriptor(scalar)
    }

    /// libffi's description of a structure of `members`, allocated here and recorded in `storage`.
    private static func structureType(
        _ members: [CType], storingInto storage: inout [UnsafeMutableRawPointer]
    ) -> UnsafeMutablePointer<LibffiShim.TypeDescriptor>? {
        let elements = UnsafeMutablePointer<UnsafeMutablePointer<LibffiShim.TypeDescriptor>?>.allocate(
            capacity: members.count + 1)
        storage.append(UnsafeMutableRawPointer(elements))
        for (index, member) in members.enumerated() {
            guard let element = ffiType(member, storingInto: &storage) else { return nil }
            elements[index] = element
        }
        elements[members.count] = nil
        let structure = UnsafeMutablePointer<LibffiShim.TypeDescriptor>.allocate(capacity: 1)
        storage.append(UnsafeMutableRawPointer(structure))
        structure.initialize(to: LibffiShim.structure(elements: elements))
        return structure
    }

    /// libffi's own idea of the return type's size and alignment, once prepared; the tests compare it
    /// with ``CType/size`` and ``CType/alignment``.
    var ffiReturnLayout: (size: Int, alignment: Int) {
        let type = cif.pointee.rtype.unsafelyUnwrapped.pointee
        return (Int(type.size), Int(type.alignment))
    }

    /// Calls the C function at `function` with arguments already in libffi's form.
    @usableFromInline
    func call(
        _ function: UnsafeRawPointer, result: UnsafeMutableRawPointer,
        arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) {
        LibffiShim.call(cif, function, result, arguments)
    }

    /// Makes `result` (a closure's result buffer) hold zero, the value of a call nothing answered: C
    /// must never read stale stack bytes as a result.
    @inline(__always)
    func zeroResult(_ result: UnsafeMutableRawPointer) {
        Self.zeroResult(result, byteCount: resultBufferSize)
    }

    /// ``zeroResult(_:)`` for a caller that keeps ``resultBufferSize`` at hand: a thunk running per call.
    @inline(__always)
    static func zeroResult(_ result: UnsafeMutableRawPointer, byteCount: Int) {
        if byteCount == MemoryLayout<UInt64>.size {
            result.storeBytes(of: 0, as: UInt64.self)
        } else {
            result.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        }
    }
}
