/// What lets ``BlockDelegate`` subclasses name their own type (`Self`) in `implement(_:key:once:_:)`.
public protocol BlockDelegateProtocol: AnyObject {}

extension BlockDelegate: BlockDelegateProtocol {}

extension BlockDelegateProtocol where Self: BlockDelegate {
    /// Implements `method` with a closure that receives this object as its first argument (REKit's
    /// receiver), so it can use the object without capturing it: no retain cycle, nothing to weaken.
    ///
    /// ```swift
    /// try stream.implement("read") { stream, cookie, buffer, n in stream.copyBytes(into: buffer, n) }
    /// ```
    ///
    /// The slot is filled directly; a `@Slot` property for the same method does not see this closure.
    /// `key` and `once` mean what they mean for `DynamicDelegate.implement(_:key:once:_:)`, which this
    /// throws like; the closure returns a ``CValue`` type, or nothing for a `void` method.
    @discardableResult
    public func implement<each A: CValue, R>(
        _ method: String, key: (any Hashable & Sendable)? = nil, once: Bool = false, _ body: @escaping (Self, repeat each A) -> R
    ) throws -> Registration {
        // The object owns the delegate that owns this closure, so it outlives every call C may make.
        unowned(unsafe) let owner = self
        let call = AssumedSendable { (argument: repeat each A) -> R in body(owner, repeat each argument) }
        return try dynamicDelegate.push(method, key: key, once: once, .plain(CallThunk.typed(anyResult: { (argument: repeat each A) -> R in
            call.call(repeat each argument)
        })))
    }
}
