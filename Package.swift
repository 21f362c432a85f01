// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "DelegateKit",
    products: [
        .library(name: "DelegateKit", targets: ["DelegateKit"]),
        .executable(name: "delegatekit-demo", targets: ["delegatekit-demo"]),
        .executable(name: "delegatekit-bench", targets: ["delegatekit-bench"]),
    ],
    targets: [
        // The library's only code that touches libffi (the benchmark's BenchmarkSupport calls it too, as the
        // baseline it measures against). In C so that Swift never reads libffi's mutable globals.
        .target(
            name: "CFFIShim",
            path: "CFFIShim",
            linkerSettings: [.linkedLibrary("ffi")]
        ),
        .target(name: "DelegateKit", dependencies: ["CFFIShim"]),
        .executableTarget(
            name: "delegatekit-demo", dependencies: ["DelegateKit", "DelegateKitFixtures", "DelegateKitExamples", "CJPEG"]),
        // Worked examples on real C libraries, shared by the demo and the tests (not a product).
        .target(name: "DelegateKitExamples", dependencies: ["DelegateKit", "CSQLite", "CLibXML2", "CJPEG", "CGLib"]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        // The system libjpeg (libjpeg-turbo's libjpeg62 API), whose error handler must never return.
        .systemLibrary(name: "CJPEG", path: "Sources/CJPEG", providers: [.apt(["libjpeg-dev"])]),
        // The system GLib, GObject and GIO, for the examples and tests only: the library does not use them.
        // (gobject-2.0 gives the include paths; gio-2.0 would add `-pthread`, which SwiftPM refuses.)
        .systemLibrary(name: "CGLib", path: "Sources/CGLib", pkgConfig: "gobject-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // The code of every example in the README and the DocC catalog, which quote it between
        // `// doc:begin` and `// doc:end` (DocumentationExamplesTests checks they match). Only what a user
        // can import: DelegateKit, the system modules and the C libraries' module maps.
        .target(name: "DocumentationExamples", dependencies: ["DelegateKit", "CSQLite", "CLibXML2", "CJPEG", "CGLib"]),
        // `swift run -c release delegatekit-bench`: DelegateKit against raw libffi, a direct call and Python.
        .executableTarget(name: "delegatekit-bench", dependencies: ["DelegateKit", "BenchmarkSupport"]),
        .target(name: "BenchmarkSupport", linkerSettings: [.linkedLibrary("ffi")]),
        // `Scripts/valgrind-leakcheck.sh`: every kind of closure and delegate, churned under valgrind.
        .executableTarget(name: "delegatekit-leakcheck", dependencies: ["DelegateKit", "DelegateKitFixtures"]),
        // Release-build checks of the register path's own trampoline pages (TrampolinePagesTests).
        .executableTarget(
            name: "delegatekit-trampoline-pages", dependencies: ["DelegateKit", "CFFIShim", "DelegateKitFixtures"]),
        // Each misuse that stops the program, one per run: ReleaseStopTests runs a release build of it.
        .executableTarget(
            name: "delegatekit-misuse", dependencies: ["DelegateKit", "DelegateKitFixtures", "CSQLite"]),
        // C code that calls function pointers the way C libraries do; shared by the tests and the demo.
        .target(
            name: "DelegateKitFixtures", dependencies: ["CLibXML2", "CJPEG"], path: "Tests/DelegateKitFixtures",
            linkerSettings: [.linkedLibrary("jpeg")]),
        // The system libxml2, whose headers live under /usr/include/libxml2 (pkg-config says so).
        .systemLibrary(name: "CLibXML2", path: "Sources/CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .testTarget(
            name: "DelegateKitTests", dependencies: [
                "DelegateKit", "CFFIShim", "DelegateKitFixtures", "DelegateKitExamples", "DocumentationExamples", "CSQLite",
                "CLibXML2", "CJPEG", "CGLib",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
