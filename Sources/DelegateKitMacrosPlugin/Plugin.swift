// Compiled only with the package trait `Macros`, which brings swift-syntax (see Package.swift).
#if Macros
import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct DelegateKitMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [CClosureMacro.self]
}
#else
// Without the trait SwiftPM still builds this target, which must be a program; nothing runs it.
@main enum DelegateKitMacrosPlugin {
    static func main() {}
}
#endif
