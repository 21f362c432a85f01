// swift-tools-version:6.2
// 6.2, the oldest Swift that builds the library (`SendableMetatype`, `weak let`) and the one CI proves
// besides the newest: an older toolchain refuses the manifest instead of failing inside it. (Package traits,
// SE-0450, need 6.1: the `Macros` trait keeps swift-syntax out of the graph of a package that does not ask
// for `#CClosure`.)
import CompilerPluginSupport
import PackageDescription

/// `#CClosure` needs swift-syntax; a package that names this trait gets the macro, any other resolves and
/// builds no swift-syntax at all.
let macros: Set<String> = ["Macros"]

let package = Package(
    name: "DelegateKit",
    products: [
        // What ships: the library and, with the `Macros` trait, its macro. The demo, the benchmark and the test
        // programs are executable targets of this package only: `swift run delegatekit-demo` works in a
        // clone, and no user's graph lists them.
        .library(name: "DelegateKit", targets: ["DelegateKit"]),
        // `import DelegateKitMacros` (with the `Macros` trait): `#CClosure`, and DelegateKit with it.
        .library(name: "DelegateKitMacros", targets: ["DelegateKitMacros"]),
    ],
    traits: [
        .trait(name: "Macros", description: "The #CClosure macro (product DelegateKitMacros); brings in swift-syntax."),
    ],
    dependencies: [
        // Resolved only when the `Macros` trait is on (every use below is conditional on it).
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
    ],
    targets: [
        // The library's C, in CFFIShim/, one target per concern, each imported by the one Swift file of
        // Sources/DelegateKit/ that owns it (in Shim/, or Closures/RegisterPath/TrampolineShim.swift for the
        // trampolines) and, the retirement target, by the files of Delegates/SlotTable/ that call its record
        // of calls directly (Scripts/check-layout.py holds every other file of the library to that);
        // headers under a folder named after their target (`#include <CDelegateKitRetirement/Retirement.h>`),
        // so that none can clash on a dependent's include path. Dependencies run one way: trampolines ←
        // libffi ← exits ← retirement.
        // The code C calls: a table of trampolines mapped from this binary, each slot entering a register
        // entry or libffi with a context; and a direct call of C in registers.
        .target(name: "CDelegateKitTrampolines", path: "CFFIShim/Trampolines"),
        // libffi, wrapped: in C so that Swift never reads libffi's mutable globals. (The benchmark's
        // DelegateKitBenchmarkSupport calls libffi itself, as the baseline it measures against.)
        .target(
            name: "CDelegateKitLibffi", dependencies: ["CDelegateKitTrampolines"], path: "CFFIShim/Libffi",
            linkerSettings: [.linkedLibrary("ffi")]),
        // Leaving a callback: a closure's requested exit (a longjmp, a C function that never returns) and the
        // setjmp site where a jump lands.
        .target(name: "CDelegateKitExits", dependencies: ["CDelegateKitLibffi"], path: "CFFIShim/Exits"),
        // The per-thread record of calls in progress that lets a removal release what it removed, the slot
        // stub's guarded entry, the publishing store and the fork gate: the C half of Delegates/SlotTable/.
        .target(name: "CDelegateKitRetirement", dependencies: ["CDelegateKitExits"], path: "CFFIShim/Retirement"),
        .target(
            name: "DelegateKit", dependencies: ["CDelegateKitLibffi", "CDelegateKitExits", "CDelegateKitRetirement", "CDelegateKitTrampolines"]),
        .executableTarget(
            name: "delegatekit-demo", dependencies: ["DelegateKit", "DelegateKitFixtures", "DelegateKitExamples", "DelegateKitCJPEG"],
            path: "Examples/delegatekit-demo"),
        // Worked examples on real C libraries, shared by the demo and the tests (not a product).
        .target(
            name: "DelegateKitExamples", dependencies: ["DelegateKit", "DelegateKitCSQLite", "DelegateKitCLibXML2", "DelegateKitCJPEG", "DelegateKitCGLib"],
            path: "Examples/DelegateKitExamples"),
        // The system C libraries the examples and tests use, as module maps (the library itself uses none).
        .systemLibrary(name: "DelegateKitCSQLite", path: "Examples/SystemLibraries/CSQLite"),
        // The system libjpeg (libjpeg-turbo's libjpeg62 API), whose error handler must never return.
        .systemLibrary(name: "DelegateKitCJPEG", path: "Examples/SystemLibraries/CJPEG", providers: [.apt(["libjpeg-dev"])]),
        // The system GLib, GObject and GIO, for the examples and tests only: the library does not use them.
        // (gobject-2.0 gives the include paths; gio-2.0 would add `-pthread`, which SwiftPM refuses.)
        .systemLibrary(name: "DelegateKitCGLib", path: "Examples/SystemLibraries/CGLib", pkgConfig: "gobject-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // The code of every example in the README and the DocC catalog, which quote it between
        // `// doc:begin` and `// doc:end` (DocumentationExamplesTests checks they match). Only what a user
        // can import: DelegateKit, the system modules and the C libraries' module maps.
        .target(
            name: "DelegateKitDocumentationExamples",
            dependencies: ["DelegateKit", "DelegateKitCSQLite", "DelegateKitCLibXML2", "DelegateKitCJPEG", "DelegateKitCGLib", "DelegateKitCPNG", "DelegateKitCLua", "DelegateKitCPython"],
            path: "Examples/DocumentationExamples"),
        // `swift run -c release delegatekit-bench`: DelegateKit against raw libffi, a direct call and Python.
        // (DelegateKitFixtures for its facts of the process: PR_SET_MDWE, the memory map, a slot's kind.)
        .executableTarget(
            name: "delegatekit-bench", dependencies: ["DelegateKit", "DelegateKitBenchmarkSupport", "DelegateKitFixtures"],
            path: "Benchmarks/delegatekit-bench"),
        .target(name: "DelegateKitBenchmarkSupport", path: "Benchmarks/BenchmarkSupport", linkerSettings: [.linkedLibrary("ffi")]),
        // `Scripts/valgrind-leakcheck.sh`: every kind of closure and delegate, churned under valgrind.
        .executableTarget(name: "delegatekit-leakcheck", dependencies: ["DelegateKit", "DelegateKitFixtures"], path: "Tests/Programs/delegatekit-leakcheck"),
        // Release builds of every kind of closure on the trampoline table, also under PR_SET_MDWE and across
        // fork (TrampolineTableTests).
        .executableTarget(
            name: "delegatekit-trampolines", dependencies: ["DelegateKit", "CDelegateKitTrampolines", "DelegateKitFixtures"],
            path: "Tests/Programs/delegatekit-trampolines"),
        // Each misuse that stops the program, one per run: ReleaseStopTests runs a release build of it.
        .executableTarget(
            name: "delegatekit-misuse", dependencies: ["DelegateKit", "DelegateKitFixtures", "DelegateKitCSQLite"],
            path: "Tests/Programs/delegatekit-misuse"),
        // Calls racing the changes of their slot, in a release build and in the suite's own
        // (SlotChangeTests).
        .executableTarget(
            name: "delegatekit-slot-races", dependencies: ["DelegateKit", "DelegateKitFixtures"],
            path: "Tests/Programs/delegatekit-slot-races"),
        // C code that calls function pointers the way C libraries do; shared by the tests and the demo.
        .target(
            name: "DelegateKitFixtures", dependencies: ["DelegateKitCLibXML2", "DelegateKitCJPEG"], path: "Tests/DelegateKitFixtures",
            linkerSettings: [.linkedLibrary("jpeg")]),
        // The system libpng and Lua 5.4, for the tests and the examples only: C libraries whose callbacks
        // leave by a `longjmp` (png_error, lua_error), what `CallbackExit` is for.
        .systemLibrary(name: "DelegateKitCPNG", path: "Examples/SystemLibraries/CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "DelegateKitCLua", path: "Examples/SystemLibraries/CLua", pkgConfig: "lua5.4", providers: [.apt(["liblua5.4-dev"])]),
        // CPython's C API, for the tests only: the interpreter embedded, calling a module's functions and a
        // type's methods and properties made of closures. pkg-config's `python3-embed` (not `python3`, which
        // leaves out the library an extension module does not link but a program embedding Python must).
        .systemLibrary(
            name: "DelegateKitCPython", path: "Examples/SystemLibraries/CPython", pkgConfig: "python3-embed",
            providers: [.apt(["libpython3-dev"])]),
        // The system libxml2, whose headers live under /usr/include/libxml2 (pkg-config says so).
        .systemLibrary(name: "DelegateKitCLibXML2", path: "Examples/SystemLibraries/CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .testTarget(
            name: "DelegateKitTests", dependencies: [
                "DelegateKit", "CDelegateKitRetirement", "CDelegateKitTrampolines", "DelegateKitFixtures", "DelegateKitExamples", "DelegateKitDocumentationExamples", "DelegateKitCSQLite",
                "DelegateKitCLibXML2", "DelegateKitCJPEG", "DelegateKitCGLib", "DelegateKitCPNG", "DelegateKitCLua",
                "DelegateKitCPython",
            ]),
        // The `#CClosure` macro: its compiler plug-in, its declaration (what users import), its benchmark
        // (`swift run -c release --traits Macros delegatekit-macro-bench`) and its tests. Without the trait the
        // plug-in is an empty program and DelegateKitMacros declares no macro (a use says "no macro named
        // 'CClosure'").
        .macro(
            name: "DelegateKitMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: macros)),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: .when(traits: macros)),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: .when(traits: macros)),
                .product(name: "SwiftDiagnostics", package: "swift-syntax", condition: .when(traits: macros)),
            ]),
        .target(
            name: "DelegateKitMacros",
            dependencies: ["DelegateKit", .target(name: "DelegateKitMacrosPlugin", condition: .when(traits: macros))]),
        .executableTarget(
            name: "delegatekit-macro-bench", dependencies: ["DelegateKitMacros", "DelegateKitBenchmarkSupport"],
            path: "Benchmarks/delegatekit-macro-bench"),
        .testTarget(
            name: "DelegateKitMacrosTests",
            dependencies: [
                "DelegateKitMacros",
                // Only with the trait: its allocation counter replaces malloc, which would then be in every
                // test run's binary, ThreadSanitizer's too (whose start-up it crashes).
                .target(name: "DelegateKitBenchmarkSupport", condition: .when(traits: macros)),
                .target(name: "DelegateKitMacrosPlugin", condition: .when(traits: macros)),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax", condition: .when(traits: macros)),
                .product(
                    name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax", condition: .when(traits: macros)),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
