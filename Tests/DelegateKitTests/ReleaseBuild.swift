import Foundation

/// The executables some tests run as release builds (`-c release`): what only a release build does
/// (print a stop's message though `precondition` prints nothing; put trampolines in DelegateKit's own
/// pages) can only be seen there. Built once, one after the other, in a scratch path of their own, so
/// that the build never waits for the build directory of the `swift test` that runs it.
enum ReleaseBuild {
    static let products = ["delegatekit-misuse", "delegatekit-trampolines", "delegatekit-slot-races"]

    /// The directory holding every product, or why the build failed. `DELEGATEKIT_RELEASE_PRODUCTS` names
    /// a directory where they are already built: a cross-compiled run (.ci/aarch64.sh, under qemu) has no
    /// compiler for its own CPU, so its products come from the cross build.
    static let directory: Result<URL, BuildFailure> = {
        if let prebuilt = getenv("DELEGATEKIT_RELEASE_PRODUCTS").map({ String(cString: $0) }), !prebuilt.isEmpty {
            return .success(URL(fileURLWithPath: prebuilt))
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let scratch = root.appendingPathComponent(".build/release-stops")
        for product in products {
            let build = run("/usr/bin/env", ["swift", "build", "-c", "release", "--product", product,
                                             "--package-path", root.path, "--scratch-path", scratch.path])
            guard build.termination == .exit(0) else { return .failure(BuildFailure(output: build.output)) }
        }
        return .success(scratch.appendingPathComponent("release"))
    }()

    /// The path of the release build of `product`, one of ``products``.
    static func executable(_ product: String) throws -> String {
        try directory.get().appendingPathComponent(product).path
    }

    /// The builds of `product` to run: the release build, and the suite's own (debug, or a sanitizer's),
    /// beside the test binary (absent where the suite runs from a copy without it).
    static func builds(of product: String) throws -> [(name: String, path: String)] {
        var builds = [("release", try executable(product))]
        let suite = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent(product).path
        if FileManager.default.isExecutableFile(atPath: suite) { builds.append(("the suite's build", suite)) }
        return builds
    }

    struct BuildFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "swift build -c release failed:\n\(output)" }
    }
}
