// swift-tools-version:6.0
// doc:begin manifest
import PackageDescription

let package = Package(
    name: "MyWrapper",
    dependencies: [
        .package(url: "https://example.invalid/DelegateKit.git", from: "0.1.0"),
    ],
    targets: [
        .target(name: "MyWrapper", dependencies: [.product(name: "DelegateKit", package: "DelegateKit")]),
    ]
)
// doc:end
// The manifest Getting Started shows, checked by DocumentationExamplesTests and compiled by .ci/run.
