// Types from C modules of the package's own also need `@retroactive` for a conformance to DelegateKit's
// `CValue`: the module writing the extension declares neither. Swift 6.3 warns without the attribute and
// accepts it; Scripts/check-consumer-manifest.sh builds this with warnings as errors.
import CMyShapes
import CSystemShapes
import DelegateKit

// doc:begin retroactive-own-targets
extension shape_kind: @retroactive CValue {}    // an enum of a C target of your package
extension corner_kind: @retroactive CValue {}   // an enum of a system-library target of your package
// doc:end

/// A closure taking both, to show they are C values.
public func cornerCounter() throws -> CClosure {
    try CClosure { (shape: shape_kind, corner: corner_kind) -> Int32 in
        corner == corner_sharp ? shape_corners(shape) : 0
    }
}
