/// Splits C declaration text into tokens, keeping each token's line and column for error messages.
struct CLexer {
    enum Kind: Equatable {
        case identifier(String)
        case number(Int)
        case punctuation(String)  // ( ) * , [ ] ; { } ...
        case end
    }

    struct Token {
        let kind: Kind
        let line: Int
        let column: Int

        /// How the token reads in an error message.
        var quoted: String {
            switch kind {
            case .identifier(let name): return "'\(name)'"
            case .number(let value): return "'\(value)'"
            case .punctuation(let text): return "'\(text)'"
            case .end: return "the end of the text"
            }
        }
    }

    let text: String

    /// Every token of the text, ending with `.end`; comments and white space dropped.
    func tokens() throws -> [Token] {
        let scalars = Array(text.unicodeScalars)
        var tokens: [Token] = []
        var index = 0, line = 1, column = 1

        func advance(_ count: Int = 1) {
            for _ in 0..<count where index < scalars.count {
                if scalars[index] == "\n" { line += 1; column = 1 } else { column += 1 }
                index += 1
            }
        }
        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }

        while let scalar = peek() {
            let startLine = line, startColumn = column
            if scalar.properties.isWhitespace {
                advance()
            } else if scalar == "/" && peek(1) == "/" {
                while let next = peek(), next != "\n" { advance() }
            } else if scalar == "/" && peek(1) == "*" {
                advance(2)
                while !(peek() == "*" && peek(1) == "/") {
                    guard peek() != nil else {
                        throw DelegateError.syntax(
                            message: "the comment that starts here is not closed with '*/'",
                            text: text, line: startLine, column: startColumn)
                    }
                    advance()
                }
                advance(2)
            } else if scalar == "#" {
                // Preprocessor lines (include guards, #define of constants) carry no declarations we read.
                while let next = peek(), next != "\n" { advance() }
            } else if scalar == "_" || scalar.properties.isAlphabetic {
                var name = ""
                while let next = peek(), next == "_" || next.properties.isAlphabetic || ("0"..."9").contains(next) {
                    name.unicodeScalars.append(next)
                    advance()
                }
                tokens.append(Token(kind: .identifier(name), line: startLine, column: startColumn))
            } else if ("0"..."9").contains(scalar) {
                var digits = ""
                while let next = peek(), next.properties.isAlphabetic || ("0"..."9").contains(next) {
                    digits.unicodeScalars.append(next)
                    advance()
                }
                guard let value = CLexer.integer(digits) else {
                    throw DelegateError.syntax(
                        message: "'\(digits)' is not an integer constant", text: text, line: startLine, column: startColumn)
                }
                tokens.append(Token(kind: .number(value), line: startLine, column: startColumn))
            } else if scalar == "." && peek(1) == "." && peek(2) == "." {
                advance(3)
                tokens.append(Token(kind: .punctuation("..."), line: startLine, column: startColumn))
            } else if "()*,[];{}=+-<>|&~!^%:?.".unicodeScalars.contains(scalar) {
                // Operators only matter inside enum bodies and constant expressions, which are skipped.
                advance()
                tokens.append(Token(kind: .punctuation(String(scalar)), line: startLine, column: startColumn))
            } else {
                throw DelegateError.syntax(
                    message: "unexpected character '\(scalar)'", text: text, line: startLine, column: startColumn)
            }
        }
        tokens.append(Token(kind: .end, line: line, column: column))
        return tokens
    }

    /// A C integer constant: decimal, hex or octal, with optional `u`/`l` suffixes.
    private static func integer(_ digits: String) -> Int? {
        var body = Substring(digits)
        while let last = body.last, "uUlL".contains(last) { body = body.dropLast() }
        if body.hasPrefix("0x") || body.hasPrefix("0X") { return Int(body.dropFirst(2), radix: 16) }
        if body.count > 1 && body.hasPrefix("0") { return Int(body.dropFirst(), radix: 8) }
        return Int(body)
    }
}
