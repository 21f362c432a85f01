import CFFIShim

/// A closure with its own register entry: code formed where the closure's Swift types are concrete, which
/// C's trampoline enters with this object as its context and which calls the closure itself, so that a
/// call crosses two Swift frames (the entry and the user's closure) where the shared entry and a
/// specialized conversion make three (see ``RegisterPath``).
///
/// Only a non-generic function can be a `@convention(c)` entry that calls a closure of known types, so
/// only the exact overloads of the common callback shapes make one: a subclass per shape holds the closure
/// (see `CClosure.init(_:)` for `int (const void *, const void *)`). A ``CClosure`` whose code enters in
/// registers uses it; every other user of the thunk (slot stubs, plans, one-shots, libffi's path) ignores
/// it.
@usableFromInline
class DirectEntry: @unchecked Sendable {  // Immutable; subclasses add only a `let` @Sendable closure.
    /// Entered by the trampoline with this object as its context pointer.
    let entry: cffi_register_entry

    init(entry: cffi_register_entry) {
        self.entry = entry
    }
}
