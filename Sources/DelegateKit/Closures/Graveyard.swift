import Glibc

/// Debug builds keep the code of closures, and the tables, whose Swift owner is gone, pointed at an
/// entry that stops the process with a message naming what was called (through the slot's data words:
/// the code itself never changes): a C library that calls
/// through a stale pointer is a bug in the program, and this makes it a clear stop instead of a jump
/// into freed memory. Release builds free them at once.
///
/// The graveyard is bounded: past ``capacity`` graves the oldest is freed, so a program that creates and
/// destroys closures without end stays within a fixed amount of memory (and a very late stale call is
/// no longer caught).
enum Graveyard {
    /// How many closures and tables are kept at most.
    static let capacity = 1 << 15

    private struct Grave {
        var code: ClosureCode?
        var table: UnsafeMutableRawPointer?
        /// The grave's own copy of its message, if it has one (a lasting message is not copied).
        var message: UnsafeMutablePointer<CChar>?

        func free() {
            code?.release()
            table?.deallocate()
            Glibc.free(message)
        }
    }

    private struct Ring {
        var graves: [Grave] = []
        var next = 0
    }

    private static let ring = Locked(Ring())

    private static func add(_ grave: Grave) {
        let evicted: Grave? = ring.withLock { ring in
            if ring.graves.count < capacity {
                ring.graves.append(grave)
                return nil
            }
            defer { ring.next = (ring.next + 1) % capacity }
            let old = ring.graves[ring.next]
            ring.graves[ring.next] = grave
            return old
        }
        evicted?.free()
    }

    /// Points `code` at the stopping entry and keeps it.
    static func bury(_ code: ClosureCode, message: String) {
        guard let text = strdup(message) else { return code.release() }
        code.bury(message: text)
        add(Grave(code: code, message: text))
    }

    /// ``bury(_:message:)`` with a message that lives for ever (a signature's own, see
    /// ``PreparedSignature/closureEpitaph``): neither copied nor freed with the grave.
    static func bury(_ code: ClosureCode, lastingMessage: UnsafePointer<CChar>) {
        code.bury(message: lastingMessage)
        add(Grave(code: code))
    }

    /// Keeps `table` and fills each of its method slots with a function that stops with the method's
    /// message, one per method of `descriptor` in its order (``deadCallMessage(method:descriptor:origin:)``).
    static func entomb(table: UnsafeMutableRawPointer, descriptor: ProtocolDescriptor, messages: [String]) {
        for index in descriptor.methods.indices {  // not `zip`, which a debug build runs unspecialized
            let method = descriptor.methods[index], message = messages[index]
            let slot = (table + method.offset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            guard let prepared = try? PreparedSignature.prepared(method.signature) else {
                RetirementShim.store(nil, in: slot)
                continue
            }
            guard let code = try? ClosureCode(prepared, handler: { _, _, _, _ in }, registerEntry: nil, userData: nil) else {
                RetirementShim.store(nil, in: slot)
                continue
            }
            let address = code.address  // read while the code is surely held: the graveyard may free it later
            bury(code, message: message)
            RetirementShim.store(address, in: slot)
        }
        add(Grave(table: table))
    }

    /// What a call through a dead delegate's table or closure prints before the process stops.
    static func deadCallMessage(method: String, descriptor: String, origin: String) -> String {
        "DelegateKit: method '\(method)' of \(descriptor) was called after its delegate (created at \(origin)) "
            + "was deinitialized; keep the delegate alive for as long as C may call through its table"
    }
}
