import DelegateKit
import DelegateKitFixtures

/// A C "library" that calls each optional callback only when its slot is non-NULL.
enum PluginDemo {
    static let plugin = ProtocolDescriptor(name: "fx_plugin", members: [
        .field("version", .int32),
        .method(MethodDescriptor(name: "start", signature: try! CSignature(parsing: "int32_t (void *context)"), isRequired: true)),
        .method(MethodDescriptor(name: "transform", signature: try! CSignature(parsing: "int64_t (void *, int64_t value)"))),
        .method(MethodDescriptor(name: "log", signature: try! CSignature(parsing: "void (void *, const char *message)"))),
        .method(MethodDescriptor(name: "weigh", signature: CSignature(.double, [.pointer, .structure([.float, .float])]))),
    ])

    static func run() {
        print("== a table with optional methods ==")
        let delegate = DynamicDelegate(protocol: plugin)
        do {
            try delegate.setField("version", Int32(1))
            do {
                try delegate.validate()
            } catch {
                print("validate():", error)
            }
            try delegate.implement("start") { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
            runLibrary(delegate, "only the required 'start'")

            try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int64) -> Int64 in value * value }
            try delegate.implement("log") { (_: UnsafeMutableRawPointer?, message: UnsafePointer<CChar>?) in
                print("  log from C: \(String(validatingCString: message!) ?? "?")")
            }
            runLibrary(delegate, "with 'transform' (squares) and 'log'")

            delegate.removeImplementation(for: "transform")
            runLibrary(delegate, "after removing 'transform'")

            do {
                try delegate.implement("transform") { (_: UnsafeMutableRawPointer?, value: Int32) -> Int32 in value }
            } catch {
                print("a mismatched closure is refused:", error)
            }
        } catch {
            print("error:", error)
        }
    }

    static func runLibrary(_ delegate: DynamicDelegate, _ label: String) {
        let values: [Int64] = [1, 2, 3, 4]
        var called: UInt32 = 0
        let total = fx_plugin_run(delegate.table.assumingMemoryBound(to: fx_plugin.self), nil, values, values.count, &called)
        let names = ["start", "transform", "log", "weigh"].enumerated().filter { called & (1 << $0.offset) != 0 }.map(\.element)
        let responds = ["transform", "log", "weigh"].map { "\($0)=\(delegate.responds(to: $0))" }.joined(separator: " ")
        print("\(label): C called [\(names.joined(separator: ", "))], total \(total); responds: \(responds)")
    }
}
