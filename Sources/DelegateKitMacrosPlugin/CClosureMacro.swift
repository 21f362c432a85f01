// Compiled only with the package trait `Macros`, which brings swift-syntax (see Package.swift).
#if Macros
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `#CClosure { (a: A0, b: A1) -> R in … }`: a `CClosure` with an entry of its own, formed in the user's
/// module where the closure's types are written.
///
/// Only a non-generic `@convention(c)` function can call a closure of known types with the arguments as C
/// left them in registers, and only a class of the closure's exact function type can hold it unconverted
/// (a generic one would store it in its most general form, and every call would pass through a
/// conversion). So the expansion declares that class, a subclass of `_DirectEntry`, with an entry that
/// reads each argument from its register by type, and hands both the closure and the class to
/// `CClosure(_:_direct:)`, which uses the entry wherever the closure's code takes the register path.
public struct CClosureMacro: ExpressionMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> ExprSyntax {
        let closure = try closureArgument(of: node)
        let signature = try writtenSignature(of: closure)
        if let generic = enclosingGenericContext(context.lexicalContext) {
            throw DiagnosticsError(diagnostics: [
                Diagnostic(node: Syntax(node), message: CClosureMessage.insideGenericContext(generic)),
            ])
        }

        let entry = context.makeUniqueName("Entry")
        let function = "@Sendable (\(signature.parameters.joined(separator: ", "))) -> \(signature.result)"
        let arguments = Array(repeating: "registers.next()", count: signature.parameters.count).joined(separator: ", ")
        // With no argument there is nothing to read, and an unused register reader would be a warning.
        let reader = signature.parameters.isEmpty
            ? ""
            : "var registers = DelegateKit._DirectRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)"
        return """
            { () throws -> DelegateKit.CClosure in
                final class \(entry): DelegateKit._DirectEntry, @unchecked Sendable {
                    let body: \(raw: function)
                    init(_ body: @escaping \(raw: function)) {
                        self.body = body
                        super.init(
                            integer: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                Swift.Unmanaged<\(entry)>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                                    \(raw: reader)
                                    return DelegateKit._DirectRegisters.integerResult(entry.body(\(raw: arguments)))
                                }
                            },
                            floating: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                Swift.Unmanaged<\(entry)>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                                    \(raw: reader)
                                    return DelegateKit._DirectRegisters.floatingResult(entry.body(\(raw: arguments)))
                                }
                            })
                    }
                }
                let body: \(raw: function) = \(closure.trimmed)
                return try DelegateKit.CClosure(body, _direct: \(entry)(body))
            }()
            """
    }

    /// The closure literal: the trailing closure, or the one argument.
    static func closureArgument(of node: some FreestandingMacroExpansionSyntax) throws -> ClosureExprSyntax {
        if let closure = node.trailingClosure, node.arguments.isEmpty { return closure }
        if node.trailingClosure == nil, node.arguments.count == 1,
            let closure = node.arguments.first?.expression.as(ClosureExprSyntax.self) {
            return closure
        }
        throw DiagnosticsError(diagnostics: [Diagnostic(node: Syntax(node), message: CClosureMessage.notALiteral)])
    }

    /// The parameter and result types as written in `closure`'s signature: the expansion spells the
    /// closure's function type with them.
    static func writtenSignature(of closure: ClosureExprSyntax) throws -> (parameters: [String], result: String) {
        func refuse(_ message: CClosureMessage, at node: some SyntaxProtocol) -> DiagnosticsError {
            DiagnosticsError(diagnostics: [Diagnostic(node: Syntax(node), message: message)])
        }
        guard let signature = closure.signature, let clause = signature.parameterClause else {
            throw refuse(.typesNotWritten, at: closure)
        }
        if let effects = signature.effectSpecifiers, effects.asyncSpecifier != nil || effects.throwsClause != nil {
            throw refuse(.hasEffects, at: effects)
        }
        guard case .parameterClause(let parameters) = clause else { throw refuse(.typesNotWritten, at: clause) }
        var types: [String] = []
        for parameter in parameters.parameters {
            guard let type = parameter.type, parameter.ellipsis == nil else { throw refuse(.typesNotWritten, at: parameter) }
            types.append(type.trimmedDescription)
        }
        guard let result = signature.returnClause else { throw refuse(.resultNotWritten, at: signature) }
        return (types, result.type.trimmedDescription)
    }

    /// The name of the innermost declaration around the expansion that makes it generic, if one does
    /// syntactically (a generic parameter clause, a `where` clause, an opaque `some` parameter or a
    /// protocol); an extension of a generic type is not seen, and the compiler's own error stands.
    static func enclosingGenericContext(_ lexicalContext: [Syntax]) -> String? {
        for syntax in lexicalContext {
            if let function = syntax.as(FunctionDeclSyntax.self),
                function.genericParameterClause != nil || function.genericWhereClause != nil
                    || function.signature.parameterClause.parameters.contains(where: { $0.type.is(SomeOrAnyTypeSyntax.self) && $0.type.as(SomeOrAnyTypeSyntax.self)?.someOrAnySpecifier.tokenKind == .keyword(.some) }) {
                return "func \(function.name.text)"
            }
            if let initializer = syntax.as(InitializerDeclSyntax.self),
                initializer.genericParameterClause != nil || initializer.genericWhereClause != nil {
                return "init"
            }
            if let type = syntax.asProtocol(NamedDeclSyntax.self), let generic = syntax.asProtocol(WithGenericParametersSyntax.self),
                generic.genericParameterClause != nil {
                return type.name.text
            }
            if let proto = syntax.as(ProtocolDeclSyntax.self) { return "protocol \(proto.name.text)" }
            if let ext = syntax.as(ExtensionDeclSyntax.self), ext.genericWhereClause != nil {
                return "extension \(ext.extendedType.trimmedDescription)"
            }
        }
        return nil
    }
}

/// What `#CClosure` refuses, each with what to write instead.
enum CClosureMessage: DiagnosticMessage {
    case notALiteral
    case typesNotWritten
    case resultNotWritten
    case hasEffects
    case insideGenericContext(String)

    var message: String {
        switch self {
        case .notALiteral:
            return "#CClosure takes one closure literal, such as `#CClosure { (a: Int32, b: Int32) -> Int32 in a + b }`"
        case .typesNotWritten:
            return "#CClosure needs each parameter's type written in the closure, as in `{ (a: Int32, b: Double) -> Double in … }`: "
                + "its expansion declares the closure's function type"
        case .resultNotWritten:
            return "#CClosure needs the closure's result type written, as in `{ (a: Int32) -> Int32 in … }` (`-> Void` for none)"
        case .hasEffects:
            return "#CClosure makes a C function pointer, which cannot be `async` or `throws`"
        case .insideGenericContext(let name):
            return "#CClosure cannot be used inside the generic \(name): its expansion declares a class, which Swift "
                + "does not allow in a generic context; use `CClosure(_:)` there"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "DelegateKitMacros", id: "\(self)".prefix(while: { $0 != "(" }).description) }
    var severity: DiagnosticSeverity { .error }
}
#endif
