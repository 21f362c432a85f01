import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct DelegateKitMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [CClosureMacro.self]
}
