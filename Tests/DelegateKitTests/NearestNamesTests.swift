import DelegateKitCSQLite
import DelegateKit
import Testing

/// "Did you mean …?": which names an unknown member name brings up, and how the message lists them.
@Suite struct NearestNamesTests {
    let vfs = DynamicDelegate(protocol: ProtocolDescriptor(for: sqlite3_vfs.self))

    func suggestions(_ name: String) -> [String] {
        do {
            try vfs.implement(name) { (_: UnsafeMutableRawPointer?) -> Int32 in 0 }
        } catch let DelegateError.unknownMethod(_, _, suggestions) {
            return suggestions
        } catch {
            Issue.record("\(name): \(error)")
        }
        return []
    }

    @Test func typosAndCaseFindTheMeantName() {
        #expect(suggestions("xOpn") == ["xOpen"])            // a letter dropped
        #expect(suggestions("xOpenn") == ["xOpen"])          // a letter doubled
        #expect(suggestions("xDleete") == ["xDelete"])       // two letters swapped
        #expect(suggestions("xopen") == ["xOpen"])           // case
        #expect(suggestions("XFULLPATHNAME") == ["xFullPathname"])
    }

    @Test func unrelatedNamesBringNothingUp() {
        #expect(suggestions("flush") == [])
        #expect(suggestions("x") == [])
    }

    @Test func atMostThreeNearestFirst() {
        // Only names within the threshold come up; of several at one distance, the first three declared.
        #expect(suggestions("xSleepp") == ["xSleep"])
        let many = ProtocolDescriptor(name: "t", methods: ["ab1", "ab2", "ab3", "ab4", "abc"].map {
            MethodDescriptor(name: $0, signature: CSignature(.void, []))
        })
        #expect(throws: DelegateError.unknownMethod("abx", protocol: "t", suggestions: ["ab1", "ab2", "ab3"])) {
            try DynamicDelegate(protocol: many).implement("abx") { () in }
        }
    }

    @Test func theMessageListsThem() {
        #expect(DelegateError.unknownMethod("xMaloc", protocol: "sqlite3_mem_methods", suggestions: ["xMalloc"]).description
            == "sqlite3_mem_methods has no method named 'xMaloc'; did you mean 'xMalloc'?")
        #expect(DelegateError.unknownField("ab", protocol: "t", suggestions: ["a", "b"]).description
            == "t has no data member named 'ab'; did you mean 'a' or 'b'?")
        #expect(DelegateError.unknownMethod("ab", protocol: "t", suggestions: ["a", "b", "abc"]).description
            == "t has no method named 'ab'; did you mean 'a', 'b' or 'abc'?")
        #expect(DelegateError.unknownMethod("flush", protocol: "t").description == "t has no method named 'flush'")
    }
}
