import DelegateKitCLibXML2

/// What one pass over an XML document saw, in a form two different parsers can agree on.
public struct XMLSummary: Equatable, Sendable {
    /// How many elements of each name.
    public var elementCounts: [String: Int] = [:]
    /// Every attribute as `element@name=value`, in document order.
    public var attributes: [String] = []
    /// All character data, CDATA included, in document order.
    public var text = ""

    /// An empty summary.
    public init() {}

    /// The same document read with libxml2's tree parser (`xmlReadMemory`), walked in document order:
    /// the reference a SAX pass is checked against. Nil when the document does not parse.
    public static func fromTree(_ bytes: [UInt8]) -> XMLSummary? {
        guard let document = xmlReadMemory(bytes, Int32(bytes.count), nil, nil, Int32(XML_PARSE_NONET.rawValue)) else { return nil }
        defer { xmlFreeDoc(document) }
        var summary = XMLSummary()
        func walk(_ first: xmlNodePtr?) {
            var node = first
            while let current = node {
                switch current.pointee.type {
                case XML_ELEMENT_NODE:
                    let name = string(current.pointee.name)
                    summary.elementCounts[name, default: 0] += 1
                    var attribute = current.pointee.properties
                    while let property = attribute {
                        // An attribute's value is its text children (Swift cannot call xmlFree, a global
                        // function-pointer variable, so no copy is asked for).
                        var value = ""
                        var child = property.pointee.children
                        while let text = child {
                            value += string(text.pointee.content)
                            child = text.pointee.next
                        }
                        summary.attributes.append("\(name)@\(string(property.pointee.name))=\(value)")
                        attribute = property.pointee.next
                    }
                    walk(current.pointee.children)
                case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                    summary.text += string(current.pointee.content)
                default:
                    break
                }
                node = current.pointee.next
            }
        }
        walk(xmlDocGetRootElement(document))
        return summary
    }
}

/// libxml2's strings (`xmlChar *`, UTF-8) as Swift strings; NULL as "".
func string(_ characters: UnsafePointer<xmlChar>?) -> String {
    characters.map { String(cString: $0) } ?? ""
}

/// A run of `count` bytes of UTF-8 that libxml2 hands over without a terminator.
func string(_ characters: UnsafePointer<xmlChar>?, count: Int) -> String {
    guard let characters, count > 0 else { return "" }
    return String(decoding: UnsafeBufferPointer(start: characters, count: count), as: UTF8.self)
}
