// The macro's tests need the package trait: `swift test --traits Macros`.
#if Macros
import DelegateKitMacrosPlugin
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `#CClosure` writes, and what it refuses with a message saying what to write instead.
@Suite struct CClosureExpansionTests {
    let macros: [String: MacroSpec] = ["CClosure": MacroSpec(type: CClosureMacro.self)]

    func expect(
        _ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        assertMacroExpansion(source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros) { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    }

    @Test func aClosureGetsAnEntryOfItsOwn() {
        expect(
            """
            let add = try #CClosure { (a: Int64, b: Int64) -> Int64 in a &+ b }
            """,
            expands: """
            let add = try { () throws -> DelegateKit.CClosure in
                final class __macro_local_5EntryfMu_: DelegateKit._DirectEntry, @unchecked Sendable {
                    let body: @Sendable (Int64, Int64) -> Int64
                    init(_ body: @escaping @Sendable (Int64, Int64) -> Int64) {
                        self.body = body
                        super.init(
                            integer: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                Swift.Unmanaged<__macro_local_5EntryfMu_>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                                    var registers = DelegateKit._DirectRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                                    return DelegateKit._DirectRegisters.integerResult(entry.body(registers.next(), registers.next()))
                                }
                            },
                            floating: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                Swift.Unmanaged<__macro_local_5EntryfMu_>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                                    var registers = DelegateKit._DirectRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                                    return DelegateKit._DirectRegisters.floatingResult(entry.body(registers.next(), registers.next()))
                                }
                            })
                    }
                }
                let body: @Sendable (Int64, Int64) -> Int64 = { (a: Int64, b: Int64) -> Int64 in
                    a &+ b
                }
                return try DelegateKit.CClosure(body, _direct: __macro_local_5EntryfMu_(body))
            }()
            """)
    }

    /// With no argument there is no register to read (and no unused reader to warn about).
    @Test func aClosureWithoutArgumentsReadsNoRegister() {
        expect(
            """
            let tick = try #CClosure(
                { () -> Void in count += 1 }
            )
            """,
            expands: """
            let tick = try { () throws -> DelegateKit.CClosure in
                final class __macro_local_5EntryfMu_: DelegateKit._DirectEntry, @unchecked Sendable {
                    let body: @Sendable () -> Void
                    init(_ body: @escaping @Sendable () -> Void) {
                        self.body = body
                        super.init(
                            integer: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                Swift.Unmanaged<__macro_local_5EntryfMu_>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in

                                    return DelegateKit._DirectRegisters.integerResult(entry.body())
                                }
                            },
                            floating: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                Swift.Unmanaged<__macro_local_5EntryfMu_>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in

                                    return DelegateKit._DirectRegisters.floatingResult(entry.body())
                                }
                            })
                    }
                }
                let body: @Sendable () -> Void = { () -> Void in
                    count += 1
                }
                return try DelegateKit.CClosure(body, _direct: __macro_local_5EntryfMu_(body))
            }()
            """)
    }

    /// Each refusal: the source stays as written, with one error at the macro or the part to change.
    func expectRefusal(_ source: String, _ message: String, line: Int = 1, column: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        expect(source, expands: source, diagnostics: [DiagnosticSpec(message: message, line: line, column: column)], sourceLocation: sourceLocation)
    }

    @Test func untypedParametersAreRefused() {
        expectRefusal(
            "let f = try #CClosure { a, b in a + b }",
            "#CClosure needs each parameter's type written in the closure, as in `{ (a: Int32, b: Double) -> Double in … }`: "
                + "its expansion declares the closure's function type", column: 25)
        expectRefusal(
            "let f = try #CClosure { (a: Int32, b) -> Int32 in a }",
            "#CClosure needs each parameter's type written in the closure, as in `{ (a: Int32, b: Double) -> Double in … }`: "
                + "its expansion declares the closure's function type", column: 36)
    }

    @Test func aMissingResultTypeIsRefused() {
        expectRefusal(
            "let f = try #CClosure { (a: Int32) in a }",
            "#CClosure needs the closure's result type written, as in `{ (a: Int32) -> Int32 in … }` (`-> Void` for none)",
            column: 25)
    }

    @Test func throwingAndAsyncClosuresAreRefused() {
        expectRefusal(
            "let f = try #CClosure { (a: Int32) throws -> Int32 in a }",
            "#CClosure makes a C function pointer, which cannot be `async` or `throws`", column: 36)
        expectRefusal(
            "let f = try #CClosure { (a: Int32) async -> Int32 in a }",
            "#CClosure makes a C function pointer, which cannot be `async` or `throws`", column: 36)
    }

    @Test func aValueInsteadOfALiteralIsRefused() {
        expectRefusal(
            "let f = try #CClosure(add)",
            "#CClosure takes one closure literal, such as `#CClosure { (a: Int32, b: Int32) -> Int32 in a + b }`", column: 13)
    }

    @Test func genericContextsAreRefusedByName() {
        let message = { (name: String) in
            "#CClosure cannot be used inside the generic \(name): its expansion declares a class, which Swift "
                + "does not allow in a generic context; use `CClosure(_:)` there"
        }
        expectRefusal(
            """
            func sorter<T>(_ t: T) throws {
                let f = try #CClosure { (a: Int32) -> Int32 in a }
            }
            """, message("func sorter"), line: 2, column: 17)
        expectRefusal(
            """
            func sorter(_ t: some Sequence) throws {
                let f = try #CClosure { (a: Int32) -> Int32 in a }
            }
            """, message("func sorter"), line: 2, column: 17)
        expectRefusal(
            """
            struct Box<T> {
                func make() throws {
                    let f = try #CClosure { (a: Int32) -> Int32 in a }
                }
            }
            """, message("Box"), line: 3, column: 21)
    }

    /// Where nothing around it is generic, the same closure expands, in place.
    @Test func aMethodOfAPlainTypeExpands() {
        expect(
            """
            struct Box {
                func make() throws {
                    let f = try #CClosure { (a: Int32) -> Int32 in a }
                }
            }
            """,
            expands: """
            struct Box {
                func make() throws {
                    let f = try { () throws -> DelegateKit.CClosure in
                        final class __macro_local_5EntryfMu_: DelegateKit._DirectEntry, @unchecked Sendable {
                            let body: @Sendable (Int32) -> Int32
                            init(_ body: @escaping @Sendable (Int32) -> Int32) {
                                self.body = body
                                super.init(
                                    integer: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                        Swift.Unmanaged<__macro_local_5EntryfMu_>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                                            var registers = DelegateKit._DirectRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                                            return DelegateKit._DirectRegisters.integerResult(entry.body(registers.next()))
                                        }
                                    },
                                    floating: { i0, i1, i2, i3, i4, context, d0, d1, d2, d3, d4, d5, d6, d7 in
                                        Swift.Unmanaged<__macro_local_5EntryfMu_>.fromOpaque(context.unsafelyUnwrapped)._withUnsafeGuaranteedRef { entry in
                                            var registers = DelegateKit._DirectRegisters(i0, i1, i2, i3, i4, d0, d1, d2, d3, d4, d5, d6, d7)
                                            return DelegateKit._DirectRegisters.floatingResult(entry.body(registers.next()))
                                        }
                                    })
                            }
                        }
                        let body: @Sendable (Int32) -> Int32 = { (a: Int32) -> Int32 in
                            a
                        }
                        return try DelegateKit.CClosure(body, _direct: __macro_local_5EntryfMu_(body))
                    }()
                }
            }
            """)
    }
}
#endif
