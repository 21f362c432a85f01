extension CFunction {
    /// Calls the function with arguments among which are C function pointers, and returns its result as
    /// an `R`: a ``CClosure``, a ``CFunction`` or a `@convention(c)` function value goes where the
    /// signature takes a pointer (a callback such as `qsort`'s comparator; a nil optional one is `NULL`),
    /// the other arguments are ``CValue``s as for `call(_:returning:)`.
    ///
    /// ```swift
    /// let qsort = try CFunction("qsort", declaration: "void qsort(void *, size_t, size_t, int (*)(const void *, const void *))")
    /// try qsort.call(base, count, MemoryLayout<Int32>.stride, ascending)  // ascending: a CClosure
    /// ```
    ///
    /// A closure passed here lives until the call returns; keep it alive yourself when C keeps the
    /// pointer for later. Swift picks this form only when an argument is not a ``CValue`` (a function
    /// type cannot conform to a protocol, so the arguments are checked when called, not when compiled).
    ///
    /// - Throws: ``DelegateError/callMismatch(function:declaration:call:reason:)`` naming both signatures
    ///   when an argument has no C type (a Swift closure, a string) or the call does not fit.
    @_disfavoredOverload
    public func call<each A, R: CValue>(_ argument: repeat each A, returning: R.Type = R.self) throws -> R {
        try performPassingFunctions(repeat each argument, returning: R.self, checkingResult: true)
    }

    /// Calls the function with arguments among which are C function pointers, ignoring what it returns
    /// (the form above that returns a result says how each kind of argument is passed).
    @_disfavoredOverload
    public func call<each A>(_ argument: repeat each A) throws {
        _ = try performPassingFunctions(repeat each argument, returning: CVoid.self, checkingResult: false)
    }

    /// The general call, for arguments whose kinds are found at run time: each is stored in a 16-aligned
    /// slot of its own (promoted past a variadic function's named arguments) and the call goes through
    /// libffi. Not a path for speed: a dynamic cast per argument, an array of stores.
    private func performPassingFunctions<each A, R: CValue>(
        _ argument: repeat each A, returning: R.Type, checkingResult: Bool
    ) throws -> R {
        let named = signature.argumentTypes.count
        var types: [CType] = []
        var stores: [(UnsafeMutableRawPointer) -> Void] = []
        var unfit: (index: Int, type: String)?
        for value in repeat each argument {
            let promoted = isVariadic && types.count >= named
            if let function = FunctionArgument(value) {
                types.append(.pointer)
                stores.append { $0.storeBytes(of: function.address, as: UnsafeRawPointer?.self) }
            } else if let value = value as? any CValue {
                let type = try Self.checkedType(of: value)
                types.append(promoted ? type.promotedForVariadicCall : type)
                stores.append { storeArgument(value, to: $0, promoted: promoted) }
            } else {
                if unfit == nil { unfit = (types.count, String(reflecting: Swift.type(of: value))) }
                types.append(.void)
                stores.append { _ in }
            }
        }
        let result = checkingResult ? try R.checkedCType() : signature.returnType
        let reason = unfit.map { "argument \($0.index + 1) is a `\($0.type)`, which has no C type; pass a CValue, or for a "
            + "function pointer a CClosure, a CFunction or a @convention(c) function" }
            ?? mismatch(arguments: types, result: result)
        if let reason {
            throw DelegateError.callMismatch(function: name, declaration: declaration, call: CSignature(result, types), reason: reason)
        }
        let prepared = try isVariadic ? preparedVariadic(types) : self.prepared.unsafelyUnwrapped
        let layout = prepared.runTimeLayout
        return withUnsafeTemporaryAllocation(byteCount: layout.byteCount, alignment: 16) { storage in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(stores.count, 1)) { pointers in
                for (index, store) in stores.enumerated() {
                    let slot = storage.baseAddress.unsafelyUnwrapped + layout.arguments[index].offset
                    store(slot)
                    pointers[index] = slot
                }
                return prepared.libffiCall.call(address, arguments: pointers.baseAddress.unsafelyUnwrapped, returning: R.self)
            }
        }
    }

    private static func checkedType<T: CValue>(of _: T) throws -> CType { try T.checkedCType() }
}
