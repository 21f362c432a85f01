extension DynamicDelegate {
    /// Writes `value` into the data member `field`, whose C type must accept `T`'s.
    ///
    /// Throws ``DelegateError/unknownField(_:protocol:suggestions:)`` (with the nearest data member names),
    /// ``DelegateError/notAField(_:protocol:signature:)`` for a method's name (methods take closures,
    /// through `implement`), or
    /// ``DelegateError/fieldTypeMismatch(field:protocol:expected:actual:)``. Write fields before C starts
    /// using the table: C reads them without synchronization.
    public func setField<T: CValue>(_ field: String, _ value: T) throws {
        let member = try checkedField(field, T.self)
        slots.state.withLock { _ in (table + member.offset).storeBytes(of: value, as: T.self) }
    }

    /// Reads the data member `field` as a `T` of the same C type.
    public func field<T: CValue>(_ field: String, as type: T.Type = T.self) throws -> T {
        let member = try checkedField(field, T.self)
        return slots.state.withLock { _ in UnsafeRawPointer(table + member.offset).loadUnaligned(as: T.self) }
    }

    func checkedField<T: CValue>(_ field: String, _ type: T.Type) throws -> FieldDescriptor {
        let member = try descriptor.checkedField(field)
        let cType = try T.checkedCType()
        guard member.type.accepts(cType) else {
            throw DelegateError.fieldTypeMismatch(field: field, protocol: descriptor.name, expected: member.type, actual: cType)
        }
        return member
    }

    /// Checks the table is ready for C: the descriptor is well formed and every required method responds
    /// (an implementation, a wrapped original or a forwarding target counts); otherwise throws
    /// ``DelegateError/missingRequiredMethods(_:protocol:)`` listing them.
    public func validate() throws {
        try descriptor.validate()
        let missing = descriptor.methods.filter { $0.isRequired && !responds(to: $0.name) }
        if !missing.isEmpty {
            throw DelegateError.missingRequiredMethods(missing.map(\.name), protocol: descriptor.name)
        }
    }
}
