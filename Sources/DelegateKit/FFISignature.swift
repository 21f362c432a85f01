import CFFIShim
import Synchronization

/// A `CSignature` prepared for libffi: the `ffi_cif` and the `ffi_type`s it points into.
///
/// libffi requires both to outlive every closure prepared with them, and every distinct signature needs
/// only one, so prepared signatures are cached for the life of the process and never freed.
final class FFISignature: @unchecked Sendable {  // Immutable after init; libffi only reads the cif.
    let signature: CSignature
    let cif: UnsafeMutablePointer<ffi_cif>

    private static let cache = Mutex<[CSignature: FFISignature]>([:])

    /// The shared prepared form of `signature`, made on first use.
    static func prepared(_ signature: CSignature) throws -> FFISignature {
        if let cached = cache.withLock({ $0[signature] }) { return cached }
        let made = try FFISignature(signature)
        // Two threads may race to prepare the same signature; the first one stored wins and the other
        // is dropped unused (a few bytes, once), so every closure of a signature shares one cif.
        return cache.withLock { cache in
            if let winner = cache[signature] { return winner }
            cache[signature] = made
            return made
        }
    }

    private init(_ signature: CSignature) throws {
        try signature.validate()
        self.signature = signature
        let argumentTypes = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(
            capacity: max(signature.argumentTypes.count, 1))
        for (index, type) in signature.argumentTypes.enumerated() {
            argumentTypes[index] = FFISignature.ffiType(type)
        }
        cif = .allocate(capacity: 1)
        let status = cffi_prep_cif(
            cif, UInt32(signature.argumentTypes.count), FFISignature.ffiType(signature.returnType), argumentTypes)
        guard status == 0 else {
            throw DelegateError.invalidSignature(signature, reason: "libffi refused it (ffi_status \(status))")
        }
    }

    /// libffi's description of `type`; structures are built once per prepared signature and kept forever.
    private static func ffiType(_ type: CType) -> UnsafeMutablePointer<ffi_type> {
        switch type {
        case .void: return cffi_type_void()
        case .bool, .uint8: return cffi_type_uint8()
        case .int8: return cffi_type_sint8()
        case .uint16: return cffi_type_uint16()
        case .int16: return cffi_type_sint16()
        case .uint32: return cffi_type_uint32()
        case .int32: return cffi_type_sint32()
        case .uint64, .size: return cffi_type_uint64()
        case .int64: return cffi_type_sint64()
        case .float: return cffi_type_float()
        case .double: return cffi_type_double()
        case .longDouble: return cffi_type_longdouble()
        case .pointer: return cffi_type_pointer()
        case .structure(let members):
            let elements = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: members.count + 1)
            for (index, member) in members.enumerated() { elements[index] = ffiType(member) }
            elements[members.count] = nil
            let structure = UnsafeMutablePointer<ffi_type>.allocate(capacity: 1)
            // size and alignment 0: ffi_prep_cif computes them from the elements.
            structure.initialize(to: ffi_type(size: 0, alignment: 0, type: UInt16(FFI_TYPE_STRUCT), elements: elements))
            return structure
        }
    }

    /// libffi's own idea of the return type's size and alignment, once prepared; the tests compare it
    /// with ``CType/size`` and ``CType/alignment``.
    var ffiReturnLayout: (size: Int, alignment: Int) {
        let type = cif.pointee.rtype.unsafelyUnwrapped.pointee
        return (Int(type.size), Int(type.alignment))
    }

    /// Calls the C function at `function` with arguments already in libffi's form.
    func call(
        _ function: UnsafeRawPointer, result: UnsafeMutableRawPointer,
        arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) {
        cffi_call(cif, function, result, arguments)
    }

    /// Bytes a result buffer needs: libffi writes narrow integers as a whole register.
    var resultBufferSize: Int { max(signature.returnType.size, MemoryLayout<UInt64>.size) }
}
