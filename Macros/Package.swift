// swift-tools-version:6.0
// DelegateKitMacros: the `#CClosure` macro, in a package of its own so that DelegateKit itself depends on
// nothing but libffi (a macro needs swift-syntax). It uses the DelegateKit package it sits in.
import CompilerPluginSupport
import Foundation
import PackageDescription

// A package used by path is named after its directory, which is whatever the checkout is called.
let delegateKit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "DelegateKitMacros",
    products: [
        .library(name: "DelegateKitMacros", targets: ["DelegateKitMacros"]),
    ],
    dependencies: [
        .package(path: delegateKit.path),
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "600.0.1"),
    ],
    targets: [
        // The compiler plug-in: the expansion, from the closure literal's written signature.
        .macro(
            name: "DelegateKitMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]),
        // What users import: the macro's declaration.
        .target(
            name: "DelegateKitMacros",
            dependencies: ["DelegateKitMacrosPlugin", .product(name: "DelegateKit", package: delegateKit.lastPathComponent)]),
        // `swift run -c release delegatekit-macro-bench`. Its C code is delegatekit-bench's BenchmarkSupport,
        // the same directory (a link; a target name is unique in the graph), so that both benchmarks measure
        // against the same loops and baselines.
        .executableTarget(name: "delegatekit-macro-bench", dependencies: ["DelegateKitMacros", "MacroBenchSupport"]),
        .target(name: "MacroBenchSupport", path: "Sources/BenchmarkSupport", linkerSettings: [.linkedLibrary("ffi")]),
        // Calls from C (both paths: CI runs them with DELEGATEKIT_FAST_PATH=0 too) and the expansion itself.
        .testTarget(
            name: "DelegateKitMacrosTests",
            dependencies: [
                "DelegateKitMacros", "DelegateKitMacrosPlugin", "MacroBenchSupport",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
