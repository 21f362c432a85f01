// libFuzzer entry point for DelegateKit's two text parsers. Scripts/fuzz-parsers.sh compiles this file
// together with Sources/DelegateKit/*.swift into one module (so it may use internal API such as
// `CSignature.validate()`), with `-sanitize=fuzzer,address`. It is not part of the Swift package.
//
// Every input is read as UTF-8 (invalid bytes become U+FFFD) and given to `CSignature(parsing:)` and to
// `ProtocolDescriptor(parsing:name:)` for a few struct names found in the text. Throwing a
// `DelegateError` is the expected answer to most inputs; anything else (a trap, another error type, a
// broken invariant on success, a hang, unbounded memory) is a bug.

@_cdecl("LLVMFuzzerTestOneInput")
public func parserFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    FuzzChecks.signature(text)
    for name in FuzzChecks.structNames(in: text) {
        FuzzChecks.descriptor(text, name: name)
    }
    return 0
}

enum FuzzChecks {
    /// Stops the run with a message libFuzzer prints next to the crashing input.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("invariant broken: \(message())") }
    }

    /// A parser may only fail with a `.syntax` error whose position is in the text.
    static func checkRefusal(_ error: any Error, _ text: String) {
        guard let error = error as? DelegateError else {
            fatalError("a parser threw \(type(of: error)), not DelegateError: \(error)")
        }
        guard case .syntax(_, let errorText, let line, let column) = error else {
            fatalError("a parser threw a non-syntax DelegateError: \(error)")
        }
        require(errorText == text, "the error carries another text")
        require(line >= 1 && column >= 1, "error position \(line):\(column)")
        _ = error.description  // Must not trap whatever the position.
    }

    static func containsStructure(_ signature: CSignature) -> Bool {
        ([signature.returnType] + signature.argumentTypes).contains { if case .structure = $0 { true } else { false } }
    }

    /// What must hold of any signature either parser returns.
    static func checkSignature(_ signature: CSignature, from text: String) {
        for argument in signature.argumentTypes {
            require(argument != .void, "a void argument in `\(signature)` from \(text.debugDescription)")
        }
        _ = try? signature.validate()  // May throw (an empty struct by value); must not trap.
        // `description` spells scalars and pointers the way the parser reads them, so a signature
        // without structures reads back as itself. (Structures print as `struct { … }`, which a
        // signature may not define, so those are not round-tripped.)
        if !containsStructure(signature) {
            let spelled = signature.description
            do {
                let again = try CSignature(parsing: spelled)
                require(again == signature, "`\(spelled)` reads back as `\(again)`")
            } catch {
                fatalError("the description `\(spelled)` does not parse: \(error)")
            }
        }
    }

    static func signature(_ text: String) {
        let parsed: CSignature
        do {
            parsed = try CSignature(parsing: text)
        } catch {
            checkRefusal(error, text)
            return
        }
        checkSignature(parsed, from: text)
    }

    static func descriptor(_ text: String, name: String) {
        let descriptor: ProtocolDescriptor
        do {
            descriptor = try ProtocolDescriptor(parsing: text, name: name)
        } catch {
            checkRefusal(error, text)
            return
        }
        _ = try? descriptor.validate()  // A duplicate or void member is reported, never a trap.
        require(descriptor.name == name, "descriptor name")
        require(descriptor.members.count == descriptor.methods.count + descriptor.fields.count, "member count")
        let alignment = descriptor.alignment
        require(alignment >= 1 && alignment & (alignment - 1) == 0, "alignment \(alignment) is not a power of two")
        require(descriptor.size >= 0 && descriptor.size % alignment == 0,
                "size \(descriptor.size) is not a multiple of alignment \(alignment)")
        // Members in declaration order: offsets never go back, each member is aligned and inside `size`.
        var methods = descriptor.methods.makeIterator(), fields = descriptor.fields.makeIterator()
        var previousEnd = 0
        for member in descriptor.members {
            let offset: Int, type: CType
            switch member {
            case .method(let method):
                guard let placed = methods.next() else { fatalError("fewer methods than method members") }
                require(placed.name == method.name && placed.signature == method.signature, "methods out of order")
                offset = placed.offset
                type = .pointer
                checkSignature(placed.signature, from: text)
                require(descriptor.method(named: placed.name) != nil, "method '\(placed.name)' not found by name")
            case .field(let fieldName, let fieldType):
                guard let placed = fields.next() else { fatalError("fewer fields than field members") }
                require(placed.name == fieldName && placed.type == fieldType, "fields out of order")
                offset = placed.offset
                type = placed.type
                require(type != .void, "void field '\(fieldName)'")
            }
            require(offset >= previousEnd, "member '\(member.name)' at \(offset) overlaps the one before (ends \(previousEnd))")
            require(offset % type.alignment == 0, "member '\(member.name)' at \(offset) misaligned for \(type.alignment)")
            previousEnd = offset + type.size
            require(previousEnd <= descriptor.size, "member '\(member.name)' ends at \(previousEnd) past size \(descriptor.size)")
            require(type.alignment <= alignment, "member alignment above the table's")
        }
    }

    /// Up to three names worth asking for: identifiers after `struct`, and those just before a ';'
    /// (typedef names such as `} sqlite3_vfs;`). "s" when the text has neither.
    static func structNames(in text: String) -> [String] {
        var names: [String] = []
        var previousWord = ""
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func isIdentifier(_ s: Unicode.Scalar) -> Bool {
            s == "_" || ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s)
        }
        while index < scalars.count && names.count < 3 {
            guard isIdentifier(scalars[index]) else { index += 1; continue }
            var word = ""
            while index < scalars.count, isIdentifier(scalars[index]) {
                word.unicodeScalars.append(scalars[index])
                index += 1
            }
            var next = index
            while next < scalars.count, scalars[next] == " " || scalars[next] == "\n" { next += 1 }
            let beforeSemicolon = next < scalars.count && scalars[next] == ";"
            if (previousWord == "struct" || beforeSemicolon) && word != "struct" && !names.contains(word) {
                names.append(word)
            }
            previousWord = word
        }
        return names.isEmpty ? ["s"] : names
    }
}
