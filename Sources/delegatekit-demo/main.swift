// `swift run delegatekit-demo`: three short scenes of Swift closures serving C.
SortingDemo.run()
CookieFileDemo.run()
PluginDemo.run()
SQLiteVFSDemo.run()
