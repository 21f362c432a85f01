/// Stops the program because DelegateKit was misused where no caller can be told: inside a C callback
/// (nobody to throw to), in a property setter, or in a declaration checked when its object is made.
///
/// `precondition` and `preconditionFailure` drop their message under `-O`, so a user of a release build
/// would see only "Illegal instruction". `fatalError` keeps it in every build, so every stop the library
/// makes goes through here, with one prefix a user can search for.
@usableFromInline
func misuse(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("DelegateKit: \(message)", file: file, line: line)
}

/// Stops the program with `message` (see ``misuse(_:file:line:)``) unless `condition` holds.
@usableFromInline @inline(__always)
func require(
    _ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
) {
    if !condition { misuse(message(), file: file, line: line) }
}
