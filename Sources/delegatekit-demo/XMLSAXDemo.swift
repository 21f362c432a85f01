// Placeholder until the libxml2 SAX example lands (being written now).
enum XMLSAXDemo { static func run() { print("xml example: not written yet") } }
