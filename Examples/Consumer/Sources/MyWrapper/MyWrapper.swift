import DelegateKit

/// A wrapper that needs DelegateKit: what Getting Started's manifest builds.
public let wrapperSignature = CSignature(.int32, [.pointer, .pointer])
