import DelegateKit
import DelegateKitFixtures
import Foundation
import Glibc
import Testing

typealias Comparator = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?) -> Int32

/// glibc's own algorithms calling Swift closures that capture their context.
@Suite struct GlibcTests {
    @Test func qsortWithCapturingComparator() throws {
        // Sort indices by a name table the comparator captures: no context pointer involved.
        let names = ["pear", "apple", "fig", "banana", "cherry", "date", "elderberry", "grape"]
        let comparisons = Counter()
        let byName = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            comparisons.increment()
            let x = names[Int(a!.load(as: Int32.self))], y = names[Int(b!.load(as: Int32.self))]
            return x < y ? -1 : x > y ? 1 : 0
        }
        var indices = (0..<Int32(names.count)).map { $0 }
        qsort(&indices, indices.count, MemoryLayout<Int32>.stride, try byName.functionPointer(as: Comparator.self))
        #expect(indices.map { names[Int($0)] } == names.sorted())
        #expect(comparisons.value >= names.count - 1)
    }

    @Test func qsortLargeArrayMatchesSwiftSort() throws {
        var numbers: [Int64] = (0..<10_000).map { Int64(($0 &* 7919) % 10_007) - 5_000 }
        let descending = try CClosure { (a: UnsafeRawPointer?, b: UnsafeRawPointer?) -> Int32 in
            let x = a!.load(as: Int64.self), y = b!.load(as: Int64.self)
            return x < y ? 1 : x > y ? -1 : 0
        }
        let expected = numbers.sorted(by: >)
        qsort(&numbers, numbers.count, 8, try descending.functionPointer(as: Comparator.self))
        #expect(numbers == expected)
    }

    @Test func bsearchFindsEveryKeyAndNoMissingOne() throws {
        let sorted: [Int32] = stride(from: 0, to: 2_000, by: 3).map { Int32($0) }
        let probes = Counter()
        let compare = try CClosure { (key: UnsafeRawPointer?, element: UnsafeRawPointer?) -> Int32 in
            probes.increment()
            let k = key!.load(as: Int32.self), e = element!.load(as: Int32.self)
            return k < e ? -1 : k > e ? 1 : 0
        }
        let comparator = try compare.functionPointer(as: Comparator.self)
        sorted.withUnsafeBytes { buffer in
            let base = buffer.baseAddress!
            for (index, value) in sorted.enumerated() {
                var key = value
                let found = bsearch(&key, base, sorted.count, 4, comparator)
                #expect(found.map(UnsafeRawPointer.init) == base + 4 * index)
            }
            var missing: Int32 = 1_000  // not a multiple of 3
            #expect(bsearch(&missing, base, sorted.count, 4, comparator) == nil)
        }
        #expect(probes.value > sorted.count)
    }

    @Test func nftwCountsTheFilesOfATreeWithoutAContextPointer() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("delegatekit-nftw-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var expectedBytes = 0
        for directory in ["a", "a/b", "a/b/c", "d"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        let files = ["top.txt", "a/one", "a/b/two", "a/b/c/three", "a/b/c/four", "d/five", "d/six.bin"]
        for (index, file) in files.enumerated() {
            let contents = Data(repeating: UInt8(index), count: 10 * (index + 1))
            expectedBytes += contents.count
            try contents.write(to: root.appendingPathComponent(file))
        }

        // nftw's callback has no user-data argument: the closure's captures carry the state.
        let fileCount = Counter(), byteCount = Counter(), directoryCount = Counter()
        let regularFile = fx_ftw_f()
        let visit = try CClosure { (path: UnsafePointer<CChar>?, info: UnsafePointer<stat>?, flag: Int32, ftw: UnsafeMutableRawPointer?) -> Int32 in
            if flag == regularFile {
                fileCount.increment()
                byteCount.increment(by: Int(info!.pointee.st_size))
            } else {
                directoryCount.increment()
            }
            return 0
        }
        #expect(fx_nftw(root.path, visit.address, 8, fx_ftw_phys()) == 0)
        #expect(fileCount.value == files.count)
        #expect(byteCount.value == expectedBytes)
        #expect(directoryCount.value == 5)  // the root and its four directories
    }
}
