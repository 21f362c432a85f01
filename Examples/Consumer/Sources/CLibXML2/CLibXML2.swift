// A target whose name DelegateKit's own examples, tests and benchmark once used: target names are global
// to a package graph, so this package could not depend on DelegateKit then.
public let ownTargetName = "CLibXML2"
