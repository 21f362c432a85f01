import DelegateKitCLibXML2
import DelegateKit

/// libxml2's SAX2 parser, its callbacks closure properties. Each `@Slot` names its member of the
/// `xmlSAXHandler` struct Swift imports by key path, and its closure type is checked against that
/// member's type when the reader is made.
///
/// ```swift
/// let reader = SAXReader()
/// reader.onStartElement = { _, name, _, _, _, _, count, _, attributes in … }
/// reader.onError = { _, error in print(error!.pointee.line) }
/// reader.parse(bytes)
/// ```
///
/// The callbacks run on the thread that calls ``parse(_:)`` (a `BlockDelegate`'s closures need not be
/// `@Sendable`). libxml2's `error` and `warning` members are variadic C functions, which a closure cannot
/// be; structured errors (``onError``) carry the same information.
public final class SAXReader: BlockDelegate {
    /// `startElementNs`: local name, prefix, namespace URI, namespaces, and attributes as five pointers
    /// each (local name, prefix, URI, value start, value end).
    @Slot(\xmlSAXHandler.startElementNs) public var onStartElement: ((
        UnsafeMutableRawPointer?, UnsafePointer<xmlChar>?, UnsafePointer<xmlChar>?, UnsafePointer<xmlChar>?,
        Int32, UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, Int32, Int32, UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) -> Void)?
    /// `endElementNs`: local name, prefix, namespace URI.
    @Slot(\xmlSAXHandler.endElementNs) public var onEndElement: ((
        UnsafeMutableRawPointer?, UnsafePointer<xmlChar>?, UnsafePointer<xmlChar>?, UnsafePointer<xmlChar>?
    ) -> Void)?
    /// `characters`: a run of text (not terminated) and its length; one text node may come in several runs.
    @Slot(\xmlSAXHandler.characters) public var onCharacters: ((UnsafeMutableRawPointer?, UnsafePointer<xmlChar>?, Int32) -> Void)?
    /// `cdataBlock`: the content of a CDATA section.
    @Slot(\xmlSAXHandler.cdataBlock) public var onCDATA: ((UnsafeMutableRawPointer?, UnsafePointer<xmlChar>?, Int32) -> Void)?
    /// `serror`: a structured error, with its line and message.
    @Slot(\xmlSAXHandler.serror) public var onError: ((UnsafeMutableRawPointer?, dk_xml_error_pointer?) -> Void)?

    /// A reader with no callbacks set.
    public init() throws {
        try super.init(for: xmlSAXHandler.self)
        // The magic number is what tells libxml2 the SAX2 members (startElementNs, serror) are there.
        handler.pointee.initialized = XML_SAX2_MAGIC
    }

    private var handler: UnsafeMutablePointer<xmlSAXHandler> { table.assumingMemoryBound(to: xmlSAXHandler.self) }

    /// Parses a document, feeding libxml2's push parser `chunkSize` bytes at a time as a network
    /// reader would, and calling the closures as it goes. Entities are replaced (`XML_PARSE_NOENT`), so
    /// attribute values arrive decoded. Returns libxml2's result: 0 when the document is well formed.
    @discardableResult
    public func parse(_ bytes: [UInt8], chunkSize: Int = 64 * 1024) -> Int32 {
        guard let context = xmlCreatePushParserCtxt(handler, nil, nil, 0, nil) else { return -1 }
        defer { xmlFreeParserCtxt(context) }
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NOENT.rawValue | XML_PARSE_NONET.rawValue))
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                var offset = 0
                repeat {
                    let count = min(chunkSize, characters.count - offset)
                    let last: Int32 = offset + count == characters.count ? 1 : 0
                    let status = xmlParseChunk(context, characters.baseAddress.map { $0 + offset }, Int32(count), last)
                    if status != 0 { return status }
                    offset += count
                } while offset < characters.count
                return 0
            }
        }
    }

    /// A summary of `bytes` made by this SAX pass, and every error it reported as (line, message).
    public static func summarize(_ bytes: [UInt8]) throws -> (summary: XMLSummary, errors: [(line: Int, message: String)]) {
        var summary = XMLSummary()
        var errors: [(line: Int, message: String)] = []
        let reader = try SAXReader()
        reader.onStartElement = { _, localName, _, _, _, _, attributeCount, _, attributes in
            let name = string(localName)
            summary.elementCounts[name, default: 0] += 1
            guard let attributes else { return }
            for index in 0..<Int(attributeCount) {
                let fields = attributes + index * 5
                let start = fields[3], end = fields[4]
                let value = start.map { string($0, count: end.map { $0 - start! } ?? 0) } ?? ""
                summary.attributes.append("\(name)@\(string(fields[0]))=\(value)")
            }
        }
        reader.onCharacters = { _, characters, count in summary.text += string(characters, count: Int(count)) }
        reader.onCDATA = { _, characters, count in summary.text += string(characters, count: Int(count)) }
        reader.onError = { _, error in
            guard let error else { return }
            let message = error.pointee.message.map { String(cString: $0) } ?? ""
            errors.append((Int(error.pointee.line), message.trimmingTrailingNewlines()))
        }
        reader.parse(bytes)
        return (summary, errors)
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var result = self
        while result.last == "\n" { result.removeLast() }
        return result
    }
}
