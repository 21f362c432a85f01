/// A place in the source, as `#fileID` and `#line` give it: "DelegateKitTests/Stress.swift:12".
struct SourceLocation: CustomStringConvertible, Sendable {
    let file: StaticString
    let line: UInt

    var description: String { "\(file):\(line)" }
}
