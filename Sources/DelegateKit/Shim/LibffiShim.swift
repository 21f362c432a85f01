import CDelegateKitLibffi

/// libffi as the library uses it: type descriptors, call interfaces, calls and closures.
///
/// This is the only Swift file that imports `CDelegateKitLibffi` (`Scripts/check-layout.py` holds every
/// other file to that), so that what the library asks of libffi is all in one place and no C type
/// reaches a public signature. Its C half is `CFFIShim/Libffi/`.
@usableFromInline
enum LibffiShim {
    /// libffi's call interface, `ffi_cif`: prepared once per signature, read by every call and closure.
    @usableFromInline typealias CallInterface = ffi_cif
    /// libffi's type descriptor, `ffi_type`.
    @usableFromInline typealias TypeDescriptor = ffi_type
    /// What libffi runs for every call of a closure: `(cif, result, arguments, user data)`.
    @usableFromInline typealias Handler = cffi_closure_handler

    /// The types libffi describes itself.
    enum Scalar {
        case void, uint8, sint8, uint16, sint16, uint32, sint32, uint64, sint64, float, double, longDouble, pointer
        case complexFloat, complexDouble, complexLongDouble, sint128, uint128
    }

    /// libffi's own descriptor of `scalar`; nil for a type the libffi in use cannot pass on this platform.
    static func descriptor(_ scalar: Scalar) -> UnsafeMutablePointer<ffi_type>? {
        switch scalar {
        case .void: return cffi_type_void()
        case .uint8: return cffi_type_uint8()
        case .sint8: return cffi_type_sint8()
        case .uint16: return cffi_type_uint16()
        case .sint16: return cffi_type_sint16()
        case .uint32: return cffi_type_uint32()
        case .sint32: return cffi_type_sint32()
        case .uint64: return cffi_type_uint64()
        case .sint64: return cffi_type_sint64()
        case .float: return cffi_type_float()
        case .double: return cffi_type_double()
        case .longDouble: return cffi_type_longdouble()
        case .pointer: return cffi_type_pointer()
        case .complexFloat: return cffi_type_complex_float()
        case .complexDouble: return cffi_type_complex_double()
        case .complexLongDouble: return cffi_type_complex_longdouble()
        case .sint128: return cffi_type_sint128()
        case .uint128: return cffi_type_uint128()
        }
    }

    /// The descriptor of a structure of `elements` (a null-terminated array). Its size and alignment are
    /// 0 until `ffi_prep_cif` computes them from the elements.
    static func structure(elements: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>) -> ffi_type {
        ffi_type(size: 0, alignment: 0, type: UInt16(FFI_TYPE_STRUCT), elements: elements)
    }

    /// A call interface to prepare with ``prepare(_:fixedCount:result:arguments:count:)``, which also plans
    /// its calls (`cffi_cif_allocate`); freed with ``freeCallInterface(_:)``.
    static func allocateCallInterface() -> UnsafeMutablePointer<ffi_cif> {
        guard let cif = cffi_cif_allocate() else { fatalError("DelegateKit: out of memory for a call interface") }
        return cif
    }

    static func freeCallInterface(_ cif: UnsafeMutablePointer<ffi_cif>) {
        cffi_cif_free(cif)
    }

    /// Whether ``call(_:_:_:_:)`` calls `cif` by the plan made when it was prepared, rather than through
    /// `ffi_call` (on this thread: suppressing the register path suppresses plans too).
    static func callsByPlan(_ cif: UnsafeMutablePointer<ffi_cif>) -> Bool {
        cffi_cif_planned(cif) != 0
    }

    /// Prepares `cif` with the platform's default ABI; for a call of a variadic function, the first
    /// `fixedCount` arguments are its named ones. Returns libffi's `ffi_status` (0 is `FFI_OK`).
    static func prepare(
        _ cif: UnsafeMutablePointer<ffi_cif>, fixedCount: Int?, result: UnsafeMutablePointer<ffi_type>,
        arguments: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>, count: Int
    ) -> Int32 {
        if let fixedCount {
            return cffi_prep_cif_var(cif, UInt32(fixedCount), UInt32(count), result, arguments)
        }
        return cffi_prep_cif(cif, UInt32(count), result, arguments)
    }

    /// Calls the C function at `function` as `cif` describes, with arguments in libffi's form; a narrow
    /// integer result is written as a whole `ffi_arg`. By the plan of its calls where it has one, else
    /// through `ffi_call`.
    @usableFromInline @_transparent
    static func call(
        _ cif: UnsafeMutablePointer<ffi_cif>, _ function: UnsafeRawPointer, _ result: UnsafeMutableRawPointer,
        _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) {
        cffi_call(cif, function, result, arguments)
    }

    /// A closure that runs `handler` with `userData` through libffi's generic entry, and the address C
    /// calls in `code`; nil (nothing allocated) when no code can be had. Its code is a slot of
    /// DelegateKit's trampoline table where the table is mapped (see `cffi_closure_create`).
    static func makeClosure(
        _ cif: UnsafeMutablePointer<ffi_cif>, handler: Handler, userData: UnsafeMutableRawPointer?,
        code: inout UnsafeMutableRawPointer?
    ) -> UnsafeMutableRawPointer? {
        cffi_closure_create(cif, handler, userData, &code)
    }

    /// Frees a closure that ``makeClosure(_:handler:userData:code:)`` made: C must not call its code any
    /// more.
    static func freeClosure(_ closure: UnsafeMutableRawPointer) {
        cffi_closure_free(closure)
    }

    /// The closure's callable code.
    static func code(_ closure: UnsafeMutableRawPointer) -> UnsafeRawPointer {
        UnsafeRawPointer(cffi_closure_code(closure).unsafelyUnwrapped)
    }

    /// Sets the user data the closure's handler receives, before C can call it.
    static func setUserData(_ closure: UnsafeMutableRawPointer, _ userData: UnsafeMutableRawPointer?) {
        cffi_closure_set_user_data(closure, userData)
    }

    /// Points a closure whose owner is gone at an entry that prints `message` and aborts, so that a late
    /// call stops loudly; the closure stays allocated until freed and `message` must outlive it.
    static func bury(_ closure: UnsafeMutableRawPointer, message: UnsafePointer<CChar>) {
        cffi_closure_bury(closure, message)
    }

    /// Whether the closure's code is a slot of DelegateKit's trampoline table (else libffi's memory,
    /// where the table cannot be mapped).
    static func isInTrampolineTable(_ closure: UnsafeRawPointer) -> Bool {
        cffi_closure_in_table(closure) != 0
    }

    /// The handler of a closure in pack form (``PackFunction``), or (`spread`) of one in its most general
    /// form, whose user data is a record ``makePackCall(function:spread:narrowResult:)`` made: libffi's entry
    /// reaches the closure's thunk through C alone.
    static func packHandler(spread: Bool) -> Handler { spread ? cffi_spread_handler : cffi_pack_handler }

    /// A record for ``packHandler(spread:)``: the function value's two words at `function`, in pack form or
    /// (`spread` its parameter count) in its most general form, its result widened as libffi wants when
    /// it is the integer `narrowResult`, narrower than a register. Free it with ``freePackCall(_:)``.
    static func makePackCall(function: UnsafeRawPointer, spread: Int, narrowResult: Scalar?) -> UnsafeMutableRawPointer {
        let resultType: Int32
        switch narrowResult {
        case .sint8: resultType = FFI_TYPE_SINT8
        case .sint16: resultType = FFI_TYPE_SINT16
        case .sint32: resultType = FFI_TYPE_SINT32
        case .uint8: resultType = FFI_TYPE_UINT8
        case .uint16: resultType = FFI_TYPE_UINT16
        case .uint32: resultType = FFI_TYPE_UINT32
        default: resultType = FFI_TYPE_VOID  // nothing to widen
        }
        let call = UnsafeMutablePointer<cffi_pack_call>.mallocated()
        call.initialize(to: cffi_pack_call(function: function, spread: UInt32(spread), result_type: UInt32(resultType)))
        return UnsafeMutableRawPointer(call)
    }

    /// Frees a record ``makePackCall(function:spread:narrowResult:)`` made.
    static func freePackCall(_ call: UnsafeMutableRawPointer) {
        call.assumingMemoryBound(to: cffi_pack_call.self).freeMallocated()
    }

    /// Stores `value` at `address` as C's `long double`, exactly (on aarch64 a quad, which Swift has no
    /// type for).
    static func storeLongDouble(_ value: Double, to address: UnsafeMutableRawPointer) {
        cffi_store_long_double(value, address)
    }

    // MARK: Variadic closures

    /// The integer and vector registers a variadic callee may find arguments in, which a variadic
    /// closure's cif pads its fixed arguments to (see `CDelegateKitLibffi/Libffi.h`).
    static var variadicRegisters: (integers: Int, vectors: Int) {
        (Int(cffi_va_integer_registers()), Int(cffi_va_vector_registers()))
    }

    /// How many bytes of a vector register a variadic argument may fill: 8 on x86_64 (a `double`; a
    /// `long double` goes on the stack), 16 on aarch64 (a `long double` takes a whole q register).
    static var variadicVectorBytes: Int { Int(cffi_va_vector_bytes()) }

    /// The bytes of a variadic call's frame: the free registers' values, the stack's address and a reader.
    static var variadicFrameSize: Int { cffi_va_frame_size() }

    /// Fills `frame` from libffi's pointers to a variadic closure's padding arguments.
    static func fillVariadicFrame(
        _ frame: UnsafeMutableRawPointer, pads: UnsafePointer<UnsafeMutableRawPointer?>, integersUsed: Int, vectorsUsed: Int
    ) {
        cffi_va_frame_fill(frame, UnsafePointer(OpaquePointer(pads)), UInt32(integersUsed), UInt32(vectorsUsed))
    }

    /// A `va_list` at the frame's first variadic argument, for the duration of `body`.
    static func withVaList<R>(_ frame: UnsafeRawPointer, _ body: (CVaListPointer) throws -> R) rethrows -> R {
        // C's va_list, not CVaListPointer, which on x86_64 is only a pointer to it.
        try withUnsafeTemporaryAllocation(byteCount: cffi_va_list_size(), alignment: 16) { list in
            let list = list.baseAddress.unsafelyUnwrapped
            cffi_va_frame_start(frame, list)
            #if arch(x86_64)
            return try body(CVaListPointer(_fromUnsafeMutablePointer: list))
            #else
            // AAPCS64's va_list is a struct passed by value: Swift's CVaListPointer holds its fields.
            return try body(CVaListPointer(
                __stack: list.load(as: UnsafeMutablePointer<Int>?.self),
                __gr_top: list.load(fromByteOffset: 8, as: UnsafeMutablePointer<Int>?.self),
                __vr_top: list.load(fromByteOffset: 16, as: UnsafeMutablePointer<Int>?.self),
                __gr_off: list.load(fromByteOffset: 24, as: Int32.self),
                __vr_off: list.load(fromByteOffset: 28, as: Int32.self)))
            #endif
        }
    }

    /// The frame reader's next argument as C's default promotions pass it.
    static func nextVariadicInt(_ frame: UnsafeMutableRawPointer) -> Int32 { cffi_va_next_int(frame) }
    static func nextVariadicLongLong(_ frame: UnsafeMutableRawPointer) -> Int64 { Int64(cffi_va_next_long_long(frame)) }
    static func nextVariadicDouble(_ frame: UnsafeMutableRawPointer) -> Double { cffi_va_next_double(frame) }
    static func nextVariadicPointer(_ frame: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? { cffi_va_next_pointer(frame) }
    #if arch(x86_64)
    static func nextVariadicLongDouble(_ frame: UnsafeMutableRawPointer) -> Float80 { cffi_va_next_long_double(frame) }
    #endif
}
