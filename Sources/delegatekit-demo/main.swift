// `swift run delegatekit-demo`: short scenes of Swift closures serving C.
import Glibc

// `swift run delegatekit-demo sqlite`: a SQLite virtual table, function and collation made of closures.
// `swift run delegatekit-demo xml`: libxml2's SAX parser driven by closures.
switch CommandLine.arguments.dropFirst().first {
case nil:
    SortingDemo.run()
    CookieFileDemo.run()
    PluginDemo.run()
    SQLiteVFSDemo.run()
case "sqlite":
    SQLiteTableDemo.run()
case "xml":
    XMLSAXDemo.run()
case let other?:
    print("unknown example '\(other)'; try: delegatekit-demo [sqlite | xml]")
    exit(2)
}
