// `swift run delegatekit-demo`: short scenes of Swift closures serving C.
import Glibc

// `swift run delegatekit-demo sqlite`: a SQLite virtual table, function and collation made of closures.
// `swift run delegatekit-demo xml`: libxml2's SAX parser driven by closures.
// `swift run delegatekit-demo sqlite-config`: SQLite's allocator and log set through variadic sqlite3_config.
// `swift run delegatekit-demo jpeg`: libjpeg's error handler, which must never return, as a closure that jumps.
// `swift run delegatekit-demo glib`: a GObject subclass in Swift, signals, a timeout, a thread pool, GIO awaited.
switch CommandLine.arguments.dropFirst().first {
case nil:
    SortingDemo.run()
    try CookieFileDemo.run()
    PluginDemo.run()
    SQLiteConfigurationDemo.run()
    SQLiteVFSDemo.run()
    JPEGDemo.run()
case "sqlite":
    SQLiteTableDemo.run()
case "xml":
    try XMLSAXDemo.run()
case "sqlite-config":
    SQLiteConfigurationDemo.run()
case "jpeg":
    JPEGDemo.run()
case "glib":
    await GLibDemo.run()
case let other?:
    print("unknown example '\(other)'; try: delegatekit-demo [sqlite | xml | sqlite-config | jpeg | glib]")
    exit(2)
}
