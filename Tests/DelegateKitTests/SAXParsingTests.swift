import DelegateKit
import DelegateKitExamples
import Testing

/// libxml2's SAX2 parser driven by closures in a table DelegateKit filled, checked against libxml2's
/// own tree parser on the same bytes.
@Suite struct SAXParsingTests {
    /// A catalog of `items` entries: nested elements, attributes with entities, text, CDATA, comments.
    static func catalog(items: Int) -> [UInt8] {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<catalog version=\"2\" owner=\"R&amp;D\">\n"
        for i in 0..<items {
            xml += "  <item id=\"\(i)\" kind=\"\(["book", "disc", "tool"][i % 3])\" note=\"a &lt; b &amp; c\">\n"
            xml += "    <name>Item \(i) — ünïcödé &amp; more</name>\n"
            xml += "    <price currency=\"EUR\">\(i).\(i % 100)</price>\n"
            if i % 7 == 0 { xml += "    <note><![CDATA[x < y && \(i) > 0]]></note>\n" }
            if i % 11 == 0 { xml += "    <!-- comment \(i) -->\n    <tags><tag>t\(i)</tag><tag>u\(i)</tag></tags>\n" }
            xml += "  </item>\n"
        }
        xml += "</catalog>\n"
        return Array(xml.utf8)
    }

    @Test func aFewMegabytesGiveTheSameCountsAttributesAndTextAsTheTreeParser() throws {
        let items = 20_000
        let bytes = Self.catalog(items: items)
        #expect(bytes.count > 2_000_000)
        let (sax, errors) = try SAXReader.summarize(bytes)
        #expect(errors.isEmpty)
        let tree = try #require(XMLSummary.fromTree(bytes))
        // Compared piece by piece: a failure should point at the difference, not print megabytes.
        #expect(sax.elementCounts == tree.elementCounts)
        #expect(sax.attributes.count == tree.attributes.count)
        let firstDifferentAttribute = zip(sax.attributes, tree.attributes).first { $0 != $1 }
        #expect(firstDifferentAttribute == nil)
        let sameText = sax.text == tree.text
        #expect(sameText, "SAX text \(sax.text.utf8.count) bytes, tree text \(tree.text.utf8.count) bytes")
        // And both are right, not merely equal.
        #expect(sax.elementCounts["item"] == items)
        #expect(sax.elementCounts["note"] == (items + 6) / 7)
        #expect(sax.elementCounts["tag"] == 2 * ((items + 10) / 11))
        #expect(sax.elementCounts.count == 7)
        #expect(sax.attributes.count == 2 + 4 * items)
        #expect(sax.attributes.prefix(3) == ["catalog@version=2", "catalog@owner=R&D", "item@id=0"])
        #expect(sax.attributes.contains("item@note=a < b & c"))
        #expect(sax.text.contains("Item 19999 — ünïcödé & more"))
        #expect(sax.text.contains("x < y && 19992 > 0"))
    }

    @Test func aMalformedDocumentReachesTheErrorCallbackWithItsLine() throws {
        let bytes = Array("<root>\n  <a>fine</a>\n  <b>\n    text\n  </c>\n</root>\n".utf8)
        let (_, errors) = try SAXReader.summarize(bytes)
        let first = errors.first
        #expect(first?.line == 5)
        #expect(first?.message.contains("Opening and ending tag mismatch: b line 3 and c") == true)
        #expect(XMLSummary.fromTree(bytes) == nil)
    }

    @Test func callbacksCanBeSwappedBetweenParses() throws {
        let reader = try SAXReader()
        var names: [String] = []
        reader.onStartElement = { _, name, _, _, _, _, _, _, _ in names.append(String(cString: name!)) }
        #expect(reader.parse(Array("<a><b/><c/></a>".utf8)) == 0)
        reader.onStartElement = nil  // the slot is NULL again: libxml2 skips it
        #expect(reader.parse(Array("<x><y/></x>".utf8)) == 0)
        #expect(names == ["a", "b", "c"])
    }
}
