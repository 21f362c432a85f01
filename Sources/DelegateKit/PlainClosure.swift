import CFFIShim

/// The closure of a plain implementation: what its slot's stub and its plans call. The delegate drops it
/// when the implementation is removed and no call runs it, which releases the user's closure.
final class PlainClosure: Sendable {
    let body: CallThunk.Body

    init(_ thunk: CallThunk) { body = thunk.body }

    /// The handler a published ``SlotStub`` runs, with this object (unretained) as user data.
    static let entry: cffi_closure_handler = { _, result, arguments, userData in
        Unmanaged<PlainClosure>.fromOpaque(userData.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
            $0.body(result.unsafelyUnwrapped, arguments ?? noArguments)
        }
    }
}
