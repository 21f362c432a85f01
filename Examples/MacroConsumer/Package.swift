// swift-tools-version:6.1
// doc:begin macro-manifest
import PackageDescription

let package = Package(
    name: "MyFastWrapper",
    dependencies: [
        .package(url: "https://example.invalid/DelegateKit.git", from: "0.1.0", traits: ["Macros"]),
    ],
    targets: [
        .target(name: "MyFastWrapper", dependencies: [.product(name: "DelegateKitMacros", package: "DelegateKit")]),
    ]
)
// doc:end
// The README's `#CClosure` section shows this manifest; DocumentationExamplesTests checks the quote and
// Scripts/check-consumer-manifest.sh resolves and builds it (tools 6.1: a `.package` line names traits
// since SE-0450).
