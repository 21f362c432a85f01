// The examples of the README and the DocC catalog about single callbacks and C types. Each region
// between `// doc:begin NAME` and `// doc:end` appears verbatim in a ```swift block of the docs.
import DelegateKit
import DelegateKitCLibXML2
import Glibc
import Synchronization

/// The README's and the overview's first example: `qsort` sorting indices by names the comparator
/// captures. Returns the sorted indices (`[1, 2, 0]`).
public func sortIndicesByName() throws -> [Int32] {
    // doc:begin qsort
    let names = ["pear", "apple", "fig"]
    var order: [Int32] = [0, 1, 2]
    let byName = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
        let x = names[Int(a!.load(as: Int32.self))], y = names[Int(b!.load(as: Int32.self))]
        return x < y ? -1 : x > y ? 1 : 0          // captures `names`: no context pointer needed
    }
    qsort(&order, order.count, MemoryLayout<Int32>.stride, try byName.functionPointer())
    // order == [1, 2, 0]: apple, fig, pear
    // doc:end
    return order
}

/// The README's C types and signatures, checked with `assert`.
public func describeTypesAndSignatures() throws {
    // doc:begin types
    let t: CType = .structure([.uint8, .double])     // .void .bool .int8 … .uint64 .size .float .double .longDouble .pointer
    assert(t.size == 16 && t.alignment == 8)         // C's layout rules
    let sig = CSignature(.int32, [.pointer, .pointer])
    let same = try CSignature(parsing: "int (const void *, const void *)")
    assert(same == sig && String(describing: sig) == "int32_t (void *, void *)")
    // doc:end
}

// doc:begin pair
struct Pair { var tag: UInt8; var value: Double }
extension Pair: CValue { static var cType: CType { .structure([.uint8, .double]) } }
// doc:end

/// A closure taking and returning `Pair` by value: the layout `Pair` states is checked when it is made.
/// Returns the closure's C signature.
public func pairClosureSignature() throws -> CSignature {
    let bump = try CClosure { (pair: Pair) -> Pair in Pair(tag: pair.tag &+ 1, value: pair.value * 2) }
    return bump.signature
}

/// The README's `CClosure` tour: a typed closure, then the same comparison with a signature known only
/// at run time, through ``CInvocation``. Returns `[3, 2, 1]`.
public func sortAscendingThenDescending() throws -> [Int32] {
    // doc:begin cclosure
    let ascending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
        let x = a!.load(as: Int32.self), y = b!.load(as: Int32.self)
        return x < y ? -1 : x > y ? 1 : 0
    }
    assert(ascending.signature == CSignature(.int32, [.pointer, .pointer]))   // from the closure's types
    let compare = try ascending.functionPointer(as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32).self)
    assert(unsafeBitCast(compare, to: UnsafeRawPointer.self) == ascending.address)   // the C-callable code
    var numbers: [Int32] = [3, 1, 2]
    qsort(&numbers, numbers.count, 4, compare)                                  // [1, 2, 3]

    // A signature known only at run time: read the arguments and set the result through CInvocation.
    let descending = try CClosure(signature: CSignature(parsing: "int (const void *, const void *)")) { invocation in
        let x = invocation.argument(0, as: UnsafeRawPointer?.self)!.load(as: Int32.self)
        let y = invocation.argument(1, as: UnsafeRawPointer?.self)!.load(as: Int32.self)
        invocation.setReturnValue(Int32(x > y ? -1 : x < y ? 1 : 0))
    }
    qsort(&numbers, numbers.count, 4, try descending.functionPointer())             // [3, 2, 1]
    // doc:end
    return numbers
}

/// Getting Started's first callback: `ftw` (which has no context pointer) counting what it visits under
/// `directory`, into a counter the closure captures. Returns the count.
public func countEntries(under directory: String) throws -> Int {
    // doc:begin ftw
    let count = Atomic<Int>(0)
    let visit = try CClosure { (path: UnsafePointer<CChar>?, info: UnsafePointer<stat>?, kind: Int32) -> Int32 in
        count.add(1, ordering: .relaxed)          // captures `count`: ftw has no context pointer
        return 0                                  // 0: go on walking
    }
    ftw(directory, try visit.functionPointer(), 16)
    // doc:end
    return count.load(ordering: .relaxed)
}

/// The README's variadic closure: libxml2's generic error function, `void (*)(void *ctx, const char *msg,
/// ...)`, which hears what the parser of a malformed document says. Returns what it heard.
public func parseErrors(of document: String) throws -> String {
    let heard = Mutex("")
    // doc:begin variadic
    let handler = try CClosure { (context: UnsafeMutableRawPointer?, format: UnsafePointer<CChar>?, arguments: CVariadicArguments) in
        let text = arguments.formatted(format!)          // as printf would: vsnprintf with the arguments
        heard.withLock { $0 += text }
    }
    xmlSetGenericErrorFunc(nil, OpaquePointer(handler.address))   // Swift imports `...` types as OpaquePointer
    defer { xmlSetGenericErrorFunc(nil, nil) }           // this thread's handler, until the closure goes
    // doc:end
    withExtendedLifetime(handler) {
        xmlFreeDoc(xmlReadMemory(document, Int32(document.utf8.count), "document.xml", nil, 0))
    }
    return heard.withLock { $0 }
}
