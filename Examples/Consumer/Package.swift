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

// Not in Getting Started: a C target and a system-library target of the package's own, whose enums conform
// to `CValue` in MyWrapper (the DocC article Signatures.md, "C enums", says when `@retroactive` is needed).
package.targets += [
    .target(name: "CMyShapes"),
    .systemLibrary(name: "CSystemShapes"),
]
package.targets[0].dependencies += ["CMyShapes", "CSystemShapes"]

// Targets named as users name theirs, which DelegateKit's own examples, tests and benchmark once were:
// target names are global to a package graph, so these prove DelegateKit's no longer clash with anyone's.
let commonNames = ["CSQLite", "CGLib", "CJPEG", "CLibXML2", "BenchmarkSupport", "DocumentationExamples"]
package.targets += commonNames.map { .target(name: $0) }
package.targets[0].dependencies += commonNames.map { .target(name: $0) }
