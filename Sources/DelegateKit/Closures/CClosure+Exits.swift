extension CClosure {
    /// A C function pointer whose signature comes from the closure's Swift types, for a closure that may
    /// leave the call by throwing a ``CallbackExit``.
    ///
    /// Any other error stops the program with a message. A closure that does not throw takes the
    /// initializers without `throws` in its type, whose calls cost nothing for leaving. The closure
    /// returns a ``CValue`` type, or nothing for a C function returning `void`.
    @inlinable
    public convenience init<each A: CValue, R>(_ body: @escaping @Sendable (repeat each A) throws -> R) throws {
        try self.init(exiting: CallThunk.typed(anyResult: { (argument: repeat each A) -> R in
            do {
                return try body(repeat each argument)
            } catch {
                return CallbackExit.record(error, returning: R.self)
            }
        }))
    }

    /// A C function pointer for a signature known only at run time, for a closure that may leave the
    /// call by throwing a ``CallbackExit``.
    public convenience init(signature: CSignature, _ body: @escaping @Sendable (CInvocation) throws -> Void) throws {
        try self.init(exiting: CallThunk.dynamic(signature) { invocation in
            do {
                try body(invocation)
            } catch {
                CallbackExit.record(error, returning: Void.self)
            }
        })
    }

    /// A closure running `thunk` whose calls, once the closure has returned, leave the way a
    /// ``CallbackExit`` it threw asked for. Its entries are its own, so that the closures that cannot
    /// leave pay nothing for the check.
    @usableFromInline
    convenience init(exiting thunk: CallThunk) throws {
        try self.init(thunk, handler: CClosure.exitingEntry, registerEntry: CClosure.exitingRegisterEntry)
        CallbackScope.adopt(self)
    }

    /// ``entry`` for a closure that may leave: the exit is taken here, after the closure returned and let
    /// go of everything, from a frame that holds nothing.
    static let exitingEntry: LibffiShim.Handler = { _, result, arguments, userData in
        Unmanaged<CClosure>.fromOpaque(userData.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            $0.body(result.unsafelyUnwrapped, arguments ?? noArguments)
        }
        CallbackExitShim.takeRequestedExit()
    }

    /// The register entry of a closure that may leave: it calls the closure's register body (this
    /// closure is its context), then takes the exit the closure asked for.
    static let exitingRegisterEntry = RegisterEntry(
        integer: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
            exitingCall(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7).integer
        },
        floating: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
            exitingCall(i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7).sse
        })

    /// A call in register form of a closure that may leave: the exit is taken once the body has returned.
    @inline(__always)
    private static func exitingCall(
        _ i0: UInt64, _ i1: UInt64, _ i2: UInt64, _ i3: UInt64, _ i4: UInt64, _ context: UnsafeMutableRawPointer?,
        _ d0: Double, _ d1: Double, _ d2: Double, _ d3: Double, _ d4: Double, _ d5: Double, _ d6: Double, _ d7: Double
    ) -> RegisterResult {
        let result = Unmanaged<CClosure>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            $0.registers.call(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
        }
        CallbackExitShim.takeRequestedExit()
        return result
    }
}
