/// Reads C declarations: today whole function signatures, with the integer spellings, `<stdint.h>` and
/// `<stddef.h>` names of LP64 Linux. Declarators are parsed the way C reads them (inside out), so
/// `int (*)(void *)` and `void (*(*)(int))(void)` come out right.
struct CDeclarationParser {
    /// A declarator's type before it is reduced to how it travels in a call.
    indirect enum Declared {
        case type(CType)
        /// A name C has not been told the layout of (an undefined typedef or struct): fine behind a pointer.
        case incomplete(String, at: CLexer.Token)
        case pointer(Declared)
        case array(Declared, count: Int?, at: CLexer.Token)
        case function(returning: Declared, parameters: [(Declared, CLexer.Token)], variadic: CLexer.Token?, at: CLexer.Token)
        /// A struct by its tag; its layout is known once its body has been read.
        case record(String, at: CLexer.Token)
    }

    /// One member of a struct body.
    struct Member {
        let name: String
        let type: Declared
        let token: CLexer.Token
    }

    private let text: String
    private let tokens: [CLexer.Token]
    private var position = 0
    /// Names that stand for types: the standard ones, plus what the caller adds.
    var typedefs: [String: CType] = CDeclarationParser.standardTypedefs
    /// Names the text's own typedefs declare.
    private var typeNames: [String: Declared] = [:]
    /// Struct bodies read so far, by tag (anonymous ones get a made-up tag).
    private var structs: [String: [Member]] = [:]
    private var anonymousStructs = 0
    /// Whether struct bodies may appear: in declarations yes, in a lone signature no.
    private var allowDefinitions = false

    /// How deeply declarators, parameter lists and struct bodies may nest in the text, how many pointers
    /// and suffixes one declarator may have, and how deeply a type may nest by value. C compilers promise
    /// at least 63 levels; without a limit, text such as 10,000 nested parentheses or a struct that
    /// contains itself ran the recursive parser (or `valueType`) off the end of the stack.
    static let maximumNesting = 100
    /// How much work laying out the text's value types may take in all, counted the way
    /// `CType.structureLayout` walks a type: 1 per type, and each member of a struct twice (its size and
    /// its alignment are each computed from the whole member). Without it `char a[99999999999]` asked for
    /// terabytes, and `int a[1][1]…[1]` or structs that each hold two of the one before took exponential
    /// time, at parse time and again wherever the type is laid out. 2^15 allows a `char[16000]` member; it
    /// is low because every step of `CType`'s layout allocates: within 2^20, the fuzzer's
    /// `char a[1][1]…[1]` (19 levels) takes 12 s and 2 GB in a sanitized build (ParserFuzzRegressionTests).
    static let layoutBudget = 1 << 15
    /// Parser recursion levels in use (see ``maximumNesting``).
    private var nesting = 0
    /// What the value types made so far cost (see ``layoutBudget``).
    private var layoutWork = 0

    init(_ text: String) throws {
        self.text = text
        tokens = try CLexer(text: text).tokens()
    }

    // MARK: Entry points

    /// The whole text as one function type (`int (void *)`, `int (*)(void *)`, `int f(void *p)`,
    /// `void (*)(void *, const char *, ...)`). The signature holds the named arguments, and is
    /// ``CSignature/isVariadic`` when they end in `...`.
    mutating func parseSignature() throws -> CSignature {
        // A header's typedef of a function-pointer type (`typedef int (*lua_CFunction)(lua_State *L);`)
        // declares the type it names: read it as that type.
        if case .identifier("typedef") = current.kind { position += 1 }
        let start = current
        let base = try parseSpecifiers()
        let (declared, name) = try parseDeclarator(base, allowName: true)
        if case .punctuation(";") = current.kind { position += 1 }
        if let (word, at) = unknownName(base), let name, case .identifier = current.kind {
            // `CURL_EXTERN CURLcode curl_easy_setopt(…)`: the unknown first word was read as the type and
            // the real type as the name.
            throw macroWord(word, before: "'\(name)'", at: at)
        }
        try expectEnd()
        switch declared {
        case .function(let result, let parameters, let variadic, let at),
            .pointer(.function(let result, let parameters, let variadic, let at)):
            return try signature(returning: result, parameters: parameters, variadic: variadic != nil, at: at)
        default:
            throw error("a function type such as `int (void *)` or `int (*)(void *)`", at: start)
        }
    }

    // MARK: Types as they travel

    /// How a declared type is passed by value, or an error that says why it cannot be.
    mutating func valueType(_ declared: Declared, at token: CLexer.Token, asParameter: Bool) throws -> CType {
        let (type, cost) = try valueType(declared, at: token, asParameter: asParameter, enclosing: [], depth: 0)
        layoutWork += cost
        return type
    }

    /// `valueType` and what laying the type out costs. `enclosing` holds the struct tags being expanded,
    /// so a struct that contains itself (directly or through others) is refused instead of recursing
    /// forever; C calls such a member an incomplete type.
    private func valueType(
        _ declared: Declared, at token: CLexer.Token, asParameter: Bool, enclosing: [String], depth: Int
    ) throws -> (type: CType, cost: Int) {
        guard depth <= Self.maximumNesting else {
            throw syntax("the type nests more than \(Self.maximumNesting) levels deep", at: token)
        }
        switch declared {
        case .type(let type):
            return (type, try affordable(Self.layoutCost(of: type, limit: Self.layoutBudget), at: token))
        case .pointer:
            return (.pointer, 1)
        case .incomplete(let name, let at):
            // A union has no layout DelegateKit can give; a typedef name gets one from `typedefs:`.
            let remedy = name.hasPrefix("union ") ? "" : "; by value it needs `typedefs: [\"\(name)\": …]`"
            throw DelegateError.syntax(
                message: "the layout of '\(name)' is unknown, so it can only be used behind a pointer ('\(name) *')\(remedy)",
                text: text, line: at.line, column: at.column)
        case .array(let element, let count, let at):
            if asParameter { return (.pointer, 1) }  // C adjusts array parameters to pointers.
            guard let count, count > 0 else {
                throw DelegateError.syntax(
                    message: "an array member needs a positive size", text: text, line: at.line, column: at.column)
            }
            let (type, cost) = try valueType(element, at: at, asParameter: false, enclosing: enclosing, depth: depth + 1)
            // Checked before the elements are made: the count may be anything up to Int.max.
            let (elements, overflow) = count.multipliedReportingOverflow(by: 2 * cost)
            guard !overflow else { throw tooLarge(at) }
            let total = try affordable(elements + 1, at: at)
            // libffi has no array type; a struct of the same elements has the same layout and passing.
            return (.structure(Array(repeating: type, count: count)), total)
        case .record(let tag, let at):
            guard let members = structs[tag] else {
                // A tagged struct declared elsewhere (`struct in_addr`, `struct timespec`): its layout may be
                // given in `typedefs:` under "struct tag" (or the bare tag, as a typedef of it usually is).
                if let given = typedefs["struct \(tag)"] ?? typedefs[tag] {
                    return try valueType(.type(given), at: at, asParameter: asParameter, enclosing: enclosing, depth: depth)
                }
                throw DelegateError.syntax(
                    message: "the layout of 'struct \(tag)' is unknown, so it can only be used behind a pointer ('struct \(tag) *'); "
                        + "by value it needs its definition in the text or `typedefs: [\"struct \(tag)\": .structure([…])]`",
                    text: text, line: at.line, column: at.column)
            }
            guard !enclosing.contains(tag) else {
                throw DelegateError.syntax(
                    message: "'struct \(tag)' contains itself, which C does not allow; a member can point to it ('struct \(tag) *')",
                    text: text, line: at.line, column: at.column)
            }
            var types: [CType] = []
            var total = 1
            for member in members {
                let (type, cost) = try valueType(
                    member.type, at: member.token, asParameter: false, enclosing: enclosing + [tag], depth: depth + 1)
                types.append(type)
                total = try affordable(total + 2 * cost, at: at)
            }
            return (.structure(types), total)
        case .function(_, _, _, let at):
            if asParameter { return (.pointer, 1) }  // ... and function parameters to function pointers.
            throw DelegateError.syntax(
                message: "a function cannot be stored by value; did you mean a function pointer '(*name)'?",
                text: text, line: at.line, column: at.column)
        }
    }

    /// `cost`, if the text's types so far and it stay within ``layoutBudget``.
    private func affordable(_ cost: Int, at token: CLexer.Token) throws -> Int {
        guard cost <= Self.layoutBudget - layoutWork else { throw tooLarge(token) }
        return cost
    }

    private func tooLarge(_ token: CLexer.Token) -> DelegateError {
        syntax("the types in this text are too large or nest too deeply for DelegateKit to lay out", at: token)
    }

    /// The layout cost of a type given whole (a caller's typedef), counted only until it passes `limit`.
    private static func layoutCost(of type: CType, limit: Int) -> Int {
        guard case .structure(let members) = type else { return 1 }
        var cost = 1
        for member in members {
            cost += 2 * layoutCost(of: member, limit: limit)
            if cost > limit { break }
        }
        return cost
    }

    mutating func signature(
        returning result: Declared, parameters: [(Declared, CLexer.Token)], variadic: Bool, at: CLexer.Token
    ) throws -> CSignature {
        let returnType: CType
        if case .type(.void) = result { returnType = .void } else {
            if case .array = result { throw syntax("a function cannot return an array", at: at) }
            if case .function = result { throw syntax("a function cannot return a function", at: at) }
            returnType = try valueType(result, at: at, asParameter: false)
        }
        var arguments: [CType] = []
        for (declared, token) in parameters {
            if case .type(.void) = declared {
                throw syntax("'void' is only allowed alone, as in '(void)'; a parameter cannot have type void", at: token)
            }
            arguments.append(try valueType(declared, at: token, asParameter: true))
        }
        return CSignature(returnType, arguments, isVariadic: variadic)
    }

    // MARK: Specifiers

    private static let qualifiers: Set<String> = [
        "const", "volatile", "restrict", "__restrict", "__restrict__", "register", "static", "extern",
        "inline", "__inline", "__inline__", "__extension__", "__const",
    ]
    /// GCC's `__attribute__((…))`: it changes nothing DelegateKit lays out, so it is read and dropped.
    private static let attributeWords: Set<String> = ["__attribute__", "__attribute"]

    private mutating func skipAttribute() throws {
        position += 1
        guard case .punctuation("(") = current.kind else { throw error("'(' after '__attribute__'", at: current) }
        position += 1
        try skipBalanced()
        position += 1  // the closing ')'
    }

    private mutating func skipAttributes() throws {
        while case .identifier(let name) = current.kind, Self.attributeWords.contains(name) { try skipAttribute() }
    }

    /// Words C reserves that DelegateKit cannot read as part of a type, and why: read as names, they
    /// would change the type silently (`unsigned __int128` as `unsigned`).
    private static let unsupportedWords: [String: String] = {
        var words: [String: String] = [:]
        for word in ["_Imaginary", "_Imaginary_I", "_Complex_I"] {
            words[word] = "is not supported: DelegateKit has no C type for imaginary numbers"
        }
        for word in ["_Float16", "__fp16", "_Float128", "__float128", "_Float64x", "__ibm128", "_Decimal32", "_Decimal64", "_Decimal128"] {
            words[word] = "is not supported: DelegateKit has no C type for this floating-point format"
        }
        words["_BitInt"] = "is not supported: DelegateKit has no C type for bit-precise integers"
        words["_Atomic"] = "is not supported: write the type without it (an atomic type's layout is the compiler's choice)"
        words["_Alignas"] = "is not supported: an alignment specifier changes a layout DelegateKit computes"
        for word in ["typeof", "__typeof__", "__typeof", "typeof_unqual"] {
            words[word] = "is not supported: write the type itself"
        }
        words["typedef"] = "can only begin a declaration, as in `typedef int (*callback)(void *);`"
        for word in [
            "auto", "break", "case", "continue", "default", "do", "else", "for", "goto", "if", "return", "sizeof",
            "switch", "while", "_Alignof", "_Generic", "_Static_assert", "_Thread_local", "__thread", "asm", "__asm__",
        ] {
            words[word] = "is a C keyword, not part of a type"
        }
        return words
    }()

    private static let baseWords: Set<String> = [
        "void", "char", "short", "int", "long", "signed", "unsigned", "float", "double", "_Bool", "bool",
        "__signed__", "_Complex", "__complex__", "__int128", "__int128_t", "__uint128_t",
    ]

    /// `complex`, <complex.h>'s name for `_Complex`, read as it only beside `float` or `double`: elsewhere
    /// it may be a name (a parameter called `complex`).
    private func isComplexMacro(_ name: String, after words: [String: Int]) -> Bool {
        guard name == "complex" else { return false }
        if words["float"] != nil || words["double"] != nil { return true }
        guard case .identifier(let next) = tokens[min(position + 1, tokens.count - 1)].kind else { return false }
        return ["float", "double", "long"].contains(next)
    }

    /// Whether the current token can begin a type (used to tell a parameter list from a parenthesis).
    private func startsType(_ token: CLexer.Token) -> Bool {
        guard case .identifier(let name) = token.kind else { return false }
        return Self.qualifiers.contains(name) || Self.baseWords.contains(name) || typedefs[name] != nil || typeNames[name] != nil
            || ["struct", "union", "enum"].contains(name)
    }

    /// The type specifiers and qualifiers before a declarator: `unsigned long const`, `struct stat`, `size_t`.
    mutating func parseSpecifiers() throws -> Declared {
        let start = current
        var words: [String: Int] = [:]
        var named: Declared?
        loop: while case .identifier(let name) = current.kind {
            if let reason = Self.unsupportedWords[name] {
                // Read as a name, `float _Imaginary` would be `float` and `unsigned __int128` `unsigned`.
                throw syntax("'\(name)' \(reason)", at: current)
            }
            if Self.attributeWords.contains(name) {
                try skipAttribute()
            } else if Self.qualifiers.contains(name) {
                position += 1
            } else if Self.baseWords.contains(name) || (named == nil && isComplexMacro(name, after: words)) {
                if let (word, at) = unknownName(named) { throw macroWord(word, before: "'\(name)'", at: at) }
                guard named == nil else { throw syntax("'\(name)' cannot be combined with the type before it", at: current) }
                let word = switch name {
                case "__signed__": "signed"
                case "__complex__", "complex": "_Complex"
                default: name
                }
                words[word, default: 0] += 1
                position += 1
            } else if name == "struct" || name == "union" || name == "enum" {
                if let (word, at) = unknownName(named) { throw macroWord(word, before: "'\(name)'", at: at) }
                guard named == nil, words.isEmpty else { throw syntax("'\(name)' cannot follow another type", at: current) }
                let keyword = current
                position += 1
                var tag: String?
                if case .identifier(let identifier) = current.kind {
                    tag = identifier
                    position += 1
                }
                if case .punctuation("{") = current.kind {
                    guard allowDefinitions else {
                        let remedy = switch name {
                        case "struct": "give its layout in `typedefs:` (\"struct tag\": .structure([…])) and write `struct tag`"
                        case "enum": "write `enum tag` (C passes an enum as an int)"
                        default: "declare the \(name) separately"
                        }
                        throw syntax("a \(name) body is not allowed in a signature; \(remedy)", at: current)
                    }
                    switch name {
                    case "struct":
                        let defined = tag ?? "(anonymous struct \(anonymousStructs))"
                        anonymousStructs += 1
                        structs[defined] = try parseStructBody()
                        named = .record(defined, at: keyword)
                    case "union":
                        throw syntax("unions are not supported: DelegateKit cannot lay out or pass a union by value", at: keyword)
                    default:
                        try skipBraces()
                        named = .type(.int32)  // C enums are int-sized on this ABI.
                    }
                    continue
                }
                guard let tag else { throw error("a name or '{' after '\(name)'", at: current) }
                switch name {
                // C passes an enum as an `int` unless `typedefs:` says otherwise: one Swift imports with a
                // `UInt32` raw value (no negative constant) is `"enum tag": .uint32`.
                case "enum": named = .type(typedefs["enum \(tag)"] ?? .int32)
                case "struct": named = .record(tag, at: keyword)
                default: named = .incomplete("union \(tag)", at: keyword)
                }
            } else if named == nil && words.isEmpty {
                // A typedef name; one nobody declared is still fine behind a pointer.
                named = typeNames[name] ?? typedefs[name].map(Declared.type) ?? .incomplete(name, at: current)
                position += 1
            } else {
                break loop  // The declarator's name.
            }
        }
        if let named { return named }
        guard !words.isEmpty else { throw error("a type", at: start) }
        return .type(try Self.resolve(words, text: text, at: start))
    }

    /// The C type named by a set of base words such as `unsigned long long int` (LP64: long is 64 bits).
    private static func resolve(_ words: [String: Int], text: String, at token: CLexer.Token) throws -> CType {
        func invalid() -> DelegateError {
            let spelled = words.sorted { $0.key < $1.key }.flatMap { Array(repeating: $0.key, count: $0.value) }
            return .syntax(
                message: "'\(spelled.joined(separator: " "))' is not a valid combination of type words",
                text: text, line: token.line, column: token.column)
        }
        let signed = words["signed", default: 0], unsigned = words["unsigned", default: 0]
        let long = words["long", default: 0], short = words["short", default: 0]
        let int = words["int", default: 0]
        if words.values.contains(where: { $0 > 1 }) && !(long == 2 && words.filter({ $0.value > 1 }).count == 1) {
            throw invalid()
        }
        if signed + unsigned > 1 || long > 2 || (short > 0 && long > 0) { throw invalid() }
        let others = Set(words.keys).subtracting(["signed", "unsigned", "long", "short", "int"])
        switch others {
        case ["double", "_Complex"] where signed + unsigned + short + int == 0 && long <= 1:
            return long == 1 ? .complexLongDouble : .complexDouble
        case ["float", "_Complex"] where words.count == 2: return .complexFloat
        case ["__int128"] where short + long + int == 0: return unsigned > 0 ? .uint128 : .int128
        case ["__int128_t"] where words.count == 1: return .int128
        case ["__uint128_t"] where words.count == 1: return .uint128
        case []:
            if short > 0 { return unsigned > 0 ? .uint16 : .int16 }
            if long > 0 { return unsigned > 0 ? .uint64 : .int64 }
            return unsigned > 0 ? .uint32 : .int32
        case ["char"] where short + long + int == 0:
            return unsigned > 0 ? .uint8 : .int8
        case ["double"] where signed + unsigned + short + int == 0 && long <= 1:
            return long == 1 ? .longDouble : .double
        case ["float"] where words.count == 1: return .float
        case ["void"] where words.count == 1: return .void
        case ["_Bool"] where words.count == 1, ["bool"] where words.count == 1: return .bool
        default: throw invalid()
        }
    }

    // MARK: Declarators

    /// A declarator around `base`: pointers, a name, arrays, parameter lists, parentheses; returns the
    /// declared type and its name, if it has one.
    mutating func parseDeclarator(_ base: Declared, allowName: Bool) throws -> (Declared, String?) {
        try enterNesting()
        defer { nesting -= 1 }
        var pointers = 0
        while case .punctuation("*") = current.kind {
            guard pointers < Self.maximumNesting else { throw tooDeep() }
            position += 1
            pointers += 1
            while case .identifier(let name) = current.kind, Self.qualifiers.contains(name) { position += 1 }
            try skipAttributes()
        }
        var type = base
        for _ in 0..<pointers { type = .pointer(type) }

        // What sits in the middle (a parenthesized declarator) applies last, so remember where it is.
        var name: String?
        var inner: Int?
        if case .punctuation("(") = current.kind, isGrouping(after: position) {
            position += 1
            inner = position
            try skipBalanced()  // Parsed again below, once the outer suffixes are known.
            try expect(")", "to close the parenthesized declarator")
        } else if case .identifier(let identifier) = current.kind {
            guard allowName else { throw syntax("unexpected name '\(identifier)' here", at: current) }
            name = identifier
            position += 1
        }
        type = try parseSuffixes(type)
        try skipAttributes()
        if let inner {
            let resume = position
            position = inner
            (type, name) = try parseDeclarator(type, allowName: allowName)
            try expect(")", "to close the parenthesized declarator")
            position = resume
        }
        try skipAttributes()
        return (type, name)
    }

    /// Array sizes and parameter lists after a declarator's name, applied right to left as C does.
    private mutating func parseSuffixes(_ base: Declared) throws -> Declared {
        var suffixes: [(isArray: Bool, count: Int?, parameters: [(Declared, CLexer.Token)], variadic: CLexer.Token?, at: CLexer.Token)] = []
        while true {
            let token = current
            if case .punctuation("[") = current.kind {
                guard suffixes.count < Self.maximumNesting else { throw tooDeep() }
                position += 1
                var count: Int?
                if case .number(let value) = current.kind { count = value; position += 1 }
                try expect("]", "to close the array size")
                suffixes.append((true, count, [], nil, token))
            } else if case .punctuation("(") = current.kind {
                guard suffixes.count < Self.maximumNesting else { throw tooDeep() }
                position += 1
                let (parameters, variadic) = try parseParameters()
                suffixes.append((false, nil, parameters, variadic, token))
            } else {
                break
            }
        }
        var type = base
        for suffix in suffixes.reversed() {
            type = suffix.isArray
                ? .array(type, count: suffix.count, at: suffix.at)
                : .function(returning: type, parameters: suffix.parameters, variadic: suffix.variadic, at: suffix.at)
        }
        return type
    }

    /// A parameter list after its '(' up to and including ')'. `()` and `(void)` both mean none; a
    /// trailing `...` makes the function variadic.
    private mutating func parseParameters() throws -> ([(Declared, CLexer.Token)], variadic: CLexer.Token?) {
        if case .punctuation(")") = current.kind { position += 1; return ([], nil) }
        if case .identifier("void") = current.kind, case .punctuation(")") = tokens[position + 1].kind {
            position += 2
            return ([], nil)
        }
        var parameters: [(Declared, CLexer.Token)] = []
        while true {
            let start = current
            if case .punctuation("...") = current.kind {
                let ellipsis = current
                guard !parameters.isEmpty else { throw syntax("'...' needs a named parameter before it", at: current) }
                position += 1
                try expect(")", "after '...'")
                return (parameters, ellipsis)
            }
            let base = try parseSpecifiers()
            let (declared, _) = try parseDeclarator(base, allowName: true)
            parameters.append((declared, start))
            if case .punctuation(",") = current.kind { position += 1; continue }
            try expect(")", "or ',' after a parameter")
            return (parameters, nil)
        }
    }

    // MARK: Declarations

    /// Reads a sequence of declarations: typedefs, struct definitions and forward declarations, enums,
    /// prototypes and variables (read for their types, otherwise ignored). Preprocessor lines are skipped.
    mutating func parseDeclarations() throws {
        allowDefinitions = true
        defer { allowDefinitions = false }
        while true {
            switch current.kind {
            case .end: return
            case .punctuation(";"): position += 1; continue
            default: break
            }
            var isTypedef = false
            if case .identifier("typedef") = current.kind {
                isTypedef = true
                position += 1
            }
            let base = try parseSpecifiers()
            if case .punctuation(";") = current.kind {  // `struct tag { … };` or `struct tag;`
                position += 1
                continue
            }
            while true {
                let token = current
                let (declared, name) = try parseDeclarator(base, allowName: true)
                if case .punctuation("{") = current.kind {
                    throw syntax("function bodies are not supported; give declarations only", at: current)
                }
                if isTypedef {
                    guard let name else { throw error("a name for the typedef", at: token) }
                    typeNames[name] = declared
                }
                if case .punctuation("=") = current.kind { try skipInitializer() }
                if case .punctuation(",") = current.kind { position += 1; continue }
                try expect(";", "after a declaration")
                break
            }
        }
    }

    /// The members of the struct named `name`: its tag, or a typedef name for it.
    func members(ofStruct name: String, at token: CLexer.Token) throws -> [Member] {
        if let members = structs[name] { return members }
        if case .record(let tag, _)? = typeNames[name], let members = structs[tag] { return members }
        throw DelegateError.syntax(
            message: "the text defines no struct named '\(name)'", text: text, line: token.line, column: token.column)
    }

    var endToken: CLexer.Token { tokens[tokens.count - 1] }

    /// A struct body after its '{' up to and including '}'.
    private mutating func parseStructBody() throws -> [Member] {
        try enterNesting()
        defer { nesting -= 1 }
        position += 1  // '{'
        var members: [Member] = []
        while true {
            if case .punctuation("}") = current.kind {
                position += 1
                return members
            }
            let start = current
            let base = try parseSpecifiers()
            if case .punctuation(";") = current.kind {
                throw syntax("anonymous struct members are not supported; give the member a name", at: start)
            }
            while true {
                let token = current
                let (declared, name) = try parseDeclarator(base, allowName: true)
                guard let name else { throw error("a member name", at: token) }
                if case .punctuation(":") = current.kind {
                    throw syntax("bit-fields are not supported: their layout is the compiler's choice", at: current)
                }
                if members.contains(where: { $0.name == name }) {
                    throw syntax("the struct already has a member named '\(name)'", at: token)
                }
                members.append(Member(name: name, type: declared, token: token))
                if case .punctuation(",") = current.kind { position += 1; continue }
                try expect(";", "after a struct member")
                break
            }
        }
    }

    /// Skips an enum body (its constants do not change any layout) from '{' to '}'.
    private mutating func skipBraces() throws {
        var depth = 0
        repeat {
            switch current.kind {
            case .punctuation("{"): depth += 1
            case .punctuation("}"): depth -= 1
            case .end: throw error("'}'", at: current)
            default: break
            }
            position += 1
        } while depth > 0
    }

    /// Skips `= value` up to the ',' or ';' that ends it.
    private mutating func skipInitializer() throws {
        var depth = 0
        while true {
            switch current.kind {
            case .punctuation("("), .punctuation("{"): depth += 1
            case .punctuation(")"), .punctuation("}"): depth -= 1
            case .punctuation(","), .punctuation(";"): if depth == 0 { return }
            case .end: throw error("';'", at: current)
            default: break
            }
            position += 1
        }
    }

    /// Whether the '(' at `index` opens a parenthesized declarator (`(*)`, `(*name)`, `(name)`) rather
    /// than a parameter list (`(void *)`, `(int x)`, `(my_type *)`).
    private func isGrouping(after index: Int) -> Bool {
        let next = tokens[index + 1]
        switch next.kind {
        case .punctuation("*"), .punctuation("("), .punctuation("["): return true
        case .identifier:
            if startsType(next) { return false }
            // `(name)(...)` or `(name)[...]` parenthesizes a declarator's name; anything else is a
            // parameter list whose type C was not told about, such as `(sqlite3_int64)`.
            guard case .punctuation(")") = tokens[index + 2].kind else { return false }
            switch tokens[index + 3].kind {
            case .punctuation("("), .punctuation("["): return true
            default: return false
            }
        default: return false
        }
    }

    private mutating func skipBalanced() throws {
        var depth = 0
        while true {
            switch current.kind {
            case .punctuation("("): depth += 1
            case .punctuation(")"):
                if depth == 0 { return }
                depth -= 1
            case .end: throw error("')'", at: current)
            default: break
            }
            position += 1
        }
    }

    // MARK: Tokens and errors

    /// Counts one more level of parser recursion; throws past ``maximumNesting`` (undoing the count, as
    /// the caller's `defer` is not yet in place).
    private mutating func enterNesting() throws {
        guard nesting < Self.maximumNesting else { throw tooDeep() }
        nesting += 1
    }

    private func tooDeep() -> DelegateError {
        syntax("declarations nest more than \(Self.maximumNesting) levels deep here", at: current)
    }

    var current: CLexer.Token { tokens[position] }

    private mutating func expect(_ punctuation: String, _ purpose: String) throws {
        guard case .punctuation(punctuation) = current.kind else {
            throw error("'\(punctuation)' \(purpose)", at: current)
        }
        position += 1
    }

    private func expectEnd() throws {
        guard case .end = current.kind else { throw error("the end of the declaration", at: current) }
    }

    /// The name and token of `declared` when it is a name nobody declared (not a `union tag`).
    private func unknownName(_ declared: Declared?) -> (String, CLexer.Token)? {
        guard case .incomplete(let name, let at)? = declared, !name.hasPrefix("union ") else { return nil }
        return (name, at)
    }

    /// An unknown name before the declaration's type, read as that type: most likely a macro of the
    /// header's (an export or calling-convention macro such as `CURL_EXTERN` or `LUA_API`).
    private func macroWord(_ word: String, before next: String, at token: CLexer.Token) -> DelegateError {
        syntax(
            "'\(word)' is not a type DelegateKit knows, and \(next) follows it: if it is a macro (an export or "
                + "calling-convention macro), leave it out", at: token)
    }

    private func error(_ expected: String, at token: CLexer.Token) -> DelegateError {
        .syntax(message: "expected \(expected), found \(token.quoted)", text: text, line: token.line, column: token.column)
    }

    private func syntax(_ message: String, at token: CLexer.Token) -> DelegateError {
        .syntax(message: message, text: text, line: token.line, column: token.column)
    }

    /// `<stdint.h>`, `<stddef.h>`, `<sys/types.h>` and `<uchar.h>` names on LP64 Linux.
    static let standardTypedefs: [String: CType] = [
        "int8_t": .int8, "uint8_t": .uint8, "int16_t": .int16, "uint16_t": .uint16,
        "int32_t": .int32, "uint32_t": .uint32, "int64_t": .int64, "uint64_t": .uint64,
        "intptr_t": .int64, "uintptr_t": .uint64, "intmax_t": .int64, "uintmax_t": .uint64,
        "size_t": .size, "rsize_t": .size, "ssize_t": .int64, "ptrdiff_t": .int64, "off_t": .int64, "off64_t": .int64,
        "wchar_t": .int32, "char16_t": .uint16, "char32_t": .uint32, "pid_t": .int32, "uid_t": .uint32,
        "gid_t": .uint32, "mode_t": .uint32, "time_t": .int64,
    ]
}
