import DelegateKit
import DelegateKitExamples

/// `swift run delegatekit-demo xml`: libxml2's SAX parser, its callbacks Swift closures set as
/// properties of a `SAXReader` (a `BlockDelegate` whose slots are key paths into `xmlSAXHandler`).
enum XMLSAXDemo {
    static func run() throws {
        print("== libxml2 SAX with closures ==")
        let document = """
            <?xml version="1.0"?>
            <library city="Lyon &amp; Paris">
              <book year="1862"><title>Les Misérables</title></book>
              <book year="1869"><title>L'Éducation sentimentale</title></book>
              <note><![CDATA[a < b]]></note>
            </library>
            """

        // 1. A reader: set only the callbacks you need; the others stay NULL and libxml2 skips them.
        let reader = try SAXReader()
        var depth = 0
        var text = ""  // one text node may arrive in several runs: gather them
        func flushText() {
            if !text.allSatisfy(\.isWhitespace) { print(String(repeating: "  ", count: depth) + "text: \(text)") }
            text = ""
        }
        reader.onStartElement = { _, name, _, _, _, _, attributeCount, _, attributes in
            flushText()
            var line = String(repeating: "  ", count: depth) + "<" + String(cString: name!)
            // Five pointers per attribute: local name, prefix, URI, value start, value end.
            for index in 0..<Int(attributeCount) {
                let fields = attributes! + index * 5
                let value = String(decoding: UnsafeBufferPointer(start: fields[3], count: fields[4]! - fields[3]!), as: UTF8.self)
                line += " \(String(cString: fields[0]!))=\"\(value)\""
            }
            print(line + ">")
            depth += 1
        }
        reader.onEndElement = { _, _, _, _ in
            flushText()
            depth -= 1
        }
        reader.onCharacters = { _, characters, count in
            text += String(decoding: UnsafeBufferPointer(start: characters, count: Int(count)), as: UTF8.self)
        }
        print("parse result:", reader.parse(Array(document.utf8)))

        // 2. The same bytes through a SAX pass and through libxml2's tree parser agree.
        let (sax, _) = try SAXReader.summarize(Array(document.utf8))
        print("elements per name:", sax.elementCounts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        print("same as the tree parser:", sax == XMLSummary.fromTree(Array(document.utf8)))

        // 3. A malformed document reaches the structured error callback with its line.
        let broken = "<root>\n  <a>fine</a>\n  <b>\n  </c>\n</root>\n"
        for error in try SAXReader.summarize(Array(broken.utf8)).errors.prefix(1) {
            print("error at line \(error.line): \(error.message)")
        }
    }
}
