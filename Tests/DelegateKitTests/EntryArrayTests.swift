@testable import DelegateKit  // RegisterPath.withLibffiEntry: both call paths
import DelegateKitCGLib
import DelegateKitCLua
import DelegateKitDocumentationExamples
import Foundation
import Glibc
import Synchronization
import Testing

/// Arrays of entries driven by the C libraries that read them: Lua's `luaL_setfuncs` and GLib's
/// `g_action_map_add_action_entries` (CPython's method and getset tables: PythonTests), typed and
/// described at run time, on both call paths. And what an array promises on its own: a failed fill
/// leaves it as it was, a full one says so, a replaced row's closure is what C calls next, and
/// everything a row holds goes with the array.
@Suite struct EntryArrayTests {
    /// A Swift object the closures capture: they are closures, not C functions, and are released.
    final class Counter: @unchecked Sendable {
        let calls = Atomic<Int>(0)
        func count() { calls.add(1, ordering: .relaxed) }
        var value: Int { calls.load(ordering: .relaxed) }
    }

    /// Runs `body` on each call path.
    private static func onBothPaths(_ body: () throws -> Void) throws {
        try body()
        try RegisterPath.withLibffiEntry(body)
    }

    // MARK: Lua

    /// Registers `functions` as the global table `dk` of a new Lua state and runs `script`, which
    /// returns an integer.
    private static func runLua(_ functions: UnsafePointer<luaL_Reg>, _ script: String) throws -> Int {
        let lua = luaL_newstate()!
        defer { lua_close(lua) }
        luaL_openlibs(lua)
        lua_createtable(lua, 0, 0)
        luaL_setfuncs(lua, functions, 0)
        lua_setglobal(lua, "dk")
        guard luaL_loadstring(lua, script) == LUA_OK, lua_pcallk(lua, 0, 1, 0, 0, nil) == LUA_OK else {
            let message = String(cString: lua_tolstring(lua, -1, nil))
            throw LuaError(message: message)
        }
        return Int(lua_tointegerx(lua, -1, nil))
    }

    struct LuaError: Error { let message: String }

    @Test func luaCallsTheClosuresOfALuaLRegArray() throws {
        try Self.onBothPaths {
            let counter = Counter()
            weak var released: Counter?
            do {
                let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 2)
                try functions.append { row in
                    try row.setField(\.name, "add")
                    try row.delegate.implement(\.func) { [counter] (lua: OpaquePointer?) -> Int32 in
                        counter.count()
                        lua_pushinteger(lua, lua_tointegerx(lua, 1, nil) + lua_tointegerx(lua, 2, nil))
                        return 1
                    }
                }
                try functions.append { row in
                    try row.setField(\.name, "calls")
                    try row.delegate.implement(\.func) { [counter] (lua: OpaquePointer?) -> Int32 in
                        lua_pushinteger(lua, lua_Integer(counter.value))
                        return 1
                    }
                }
                #expect(functions.count == 2)
                #expect(functions.baseAddress[2].name == nil && functions.baseAddress[2].func == nil)  // the terminator
                #expect(try Self.runLua(functions.baseAddress, "return dk.add(2, 3) * 100 + dk.add(1, 1) + dk.calls()") == 504)
                #expect(counter.value == 2)
                released = counter
            }
            #expect(released != nil)
            _ = consume counter
            #expect(released == nil, "the array released its closures, and what they captured")
        }
    }

    @Test func aLayoutDescribedAtRunTimeServesLuaAsWell() throws {
        let registration = try ProtocolDescriptor(parsing: "struct luaL_Reg { const char *name; int (*func)(void *lua); };", name: "luaL_Reg")
        try Self.onBothPaths {
            let functions = EntryArray(protocol: registration, capacity: 1)
            try functions.append { row in
                try row.setField("name", "answer")
                try row.delegate.implement("func") { (lua: UnsafeMutableRawPointer?) -> Int32 in
                    lua_pushinteger(OpaquePointer(lua), 42)
                    return 1
                }
            }
            #expect(functions.count == 1)
            let typed = functions.baseAddress.assumingMemoryBound(to: luaL_Reg.self)
            #expect(try Self.runLua(typed, "return dk.answer()") == 42)
        }
    }

    @Test func aReplacedClosureIsWhatTheNextCallRuns() throws {
        try Self.onBothPaths {
            let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 1)
            try functions.append { row in
                try row.setField(\.name, "value")
                try row.delegate.implement(\.func) { (lua: OpaquePointer?) -> Int32 in
                    lua_pushinteger(lua, 1)
                    return 1
                }
            }
            let first = functions.baseAddress[0].func
            #expect(try Self.runLua(functions.baseAddress, "return dk.value()") == 1)
            try functions.update(row: 0) { row in
                try row.delegate.implement(\.func) { (lua: OpaquePointer?) -> Int32 in
                    lua_pushinteger(lua, 2)
                    return 1
                }
            }
            #expect(try Self.runLua(functions.baseAddress, "return dk.value()") == 2)
            // Lua copied the old pointer when it registered it: the slot's code stays, and runs the new closure.
            let copied = try #require(first)
            let lua = luaL_newstate()!
            defer { lua_close(lua) }
            #expect(copied(lua) == 1 && lua_tointegerx(lua, -1, nil) == 2)
        }
    }

    // MARK: GLib

    @Test func gioActivatesTheClosuresOfAGActionEntryArray() throws {
        try Self.onBothPaths {
            let counter = Counter()
            let total = Atomic<Int32>(0)
            let actions = TypedEntryArray(of: GActionEntry.self, capacity: 2)
            try actions.append { row in
                try row.setField(\.name, "increment")
                try row.delegate.implement(\.activate) { [counter] (_: OpaquePointer?, _: OpaquePointer?, _: gpointer?) in
                    counter.count()
                }
            }
            try actions.append { row in
                try row.setField(\.name, "add")
                try row.setField(\.parameter_type, "i")
                try row.delegate.implement(\.activate) { (_: OpaquePointer?, parameter: OpaquePointer?, _: gpointer?) in
                    total.add(g_variant_get_int32(parameter), ordering: .relaxed)
                }
            }
            let group = g_simple_action_group_new()
            defer { g_object_unref(group) }
            g_action_map_add_action_entries(OpaquePointer(group), actions.baseAddress, gint(actions.count), nil)
            g_action_group_activate_action(OpaquePointer(group), "increment", nil)
            g_action_group_activate_action(OpaquePointer(group), "increment", nil)
            g_action_group_activate_action(OpaquePointer(group), "add", g_variant_new_int32(40))
            g_action_group_activate_action(OpaquePointer(group), "add", g_variant_new_int32(2))
            #expect(counter.value == 2)
            #expect(total.load(ordering: .relaxed) == 42)
        }
    }

    @Test func theDocumentationsExamplesRun() throws {
        try Self.onBothPaths {
            #expect(try runLuaWithSwiftFunctions("counter.add(40); counter.add(2); return counter.value()") == 42)
            let (quits, zoom) = try activateSwiftActions(zooms: [150, 75])
            #expect(quits == 1 && zoom == 75)
        }
    }

    // MARK: What an array promises

    @Test func aFullArrayRefusesAnotherRowAndSaysWhy() throws {
        let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 1)
        try functions.append { try $0.setField(\.name, "only") }
        #expect(throws: DelegateError.entryArrayFull(type: "TypedEntryArray<luaL_Reg>", capacity: 1)) {
            try functions.append { try $0.setField(\.name, "more") }
        }
        #expect(functions.count == 1)
        let message = String(describing: DelegateError.entryArrayFull(type: "TypedEntryArray<luaL_Reg>", capacity: 1))
        #expect(message.contains("TypedEntryArray<luaL_Reg> is full") && message.contains("capacity"))
    }

    @Test func aFailedFillLeavesTheArrayAsItWas() throws {
        let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 2)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try functions.append { row in
                try row.setField(\.name, "half")
                try row.delegate.implement(\.func) { (_: OpaquePointer?) -> Int32 in 0 }
                throw Refused()
            }
        }
        #expect(functions.count == 0)
        #expect(functions.baseAddress[0].name == nil && functions.baseAddress[0].func == nil)
        // The record is free again: the next row takes it.
        #expect(try functions.append { try $0.setField(\.name, "whole") } == 0)
        #expect(String(cString: functions.baseAddress[0].name) == "whole")
    }

    @Test func aMethodMemberTakesAClosureAndAWrongClosureIsRefused() throws {
        let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 1)
        #expect(throws: DelegateError.self) {
            try functions.append { row in
                try row.setField(\luaL_Reg.func, nil)
            }
        }
        do {
            try functions.append { row in try row.setField(\luaL_Reg.func, nil) }
            Issue.record("a function-pointer member was set as data")
        } catch let error as DelegateError {
            guard case .notAField(let name, _, _) = error else { throw error }
            #expect(name == "func")
        }
        do {
            try functions.append { row in
                try row.delegate.implement(\.func) { (_: OpaquePointer?, _: Int32) -> Int32 in 0 }
            }
            Issue.record("a closure of another type was installed")
        } catch let error as DelegateError {
            guard case .typeMismatch(let member, _, _, _) = error else { throw error }
            #expect(member == "func")
        }
        #expect(functions.count == 0)
    }

    /// A row appended as a record keeps the function the record holds as its slot's original, which an
    /// implementation covers and its removal brings back.
    @Test func aRecordsFunctionIsTheBottomOfItsSlot() throws {
        let original: lua_CFunction = { lua in
            lua_pushinteger(lua, 1)
            return 1
        }
        try Self.onBothPaths {
            let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 1)
            try functions.append(luaL_Reg(name: nil, func: original)) { try $0.setField(\.name, "value") }
            #expect(try Self.runLua(functions.baseAddress, "return dk.value()") == 1)
            let row = functions.delegates[0]
            try row.implement(\.func) { (lua: OpaquePointer?) -> Int32 in
                lua_pushinteger(lua, 2)
                return 1
            }
            #expect(try Self.runLua(functions.baseAddress, "return dk.value()") == 2)
            #expect(row.removeImplementation(for: "func"))
            #expect(try Self.runLua(functions.baseAddress, "return dk.value()") == 1)
        }
    }

    /// A member holding a closure unchecked must hold a pointer.
    @Test func aClosureIsHeldOnlyByAPointerMember() throws {
        let actions = TypedEntryArray(of: GActionEntry.self, capacity: 1)
        let closure = try CClosure { (_: OpaquePointer?) in }
        do {
            try actions.append { try $0.setField(\.padding, holding: closure) }
            Issue.record("a closure went into a member that is no pointer")
        } catch let error as DelegateError {
            guard case .invalidMember(let member, _, let reason) = error else { throw error }
            #expect(member.contains("padding") && reason.contains("not a C function pointer or a raw pointer"))
        }
        #expect(actions.count == 0)
    }

    @Test func anUpdateOfNoRowSaysSo() throws {
        let functions = EntryArray(protocol: try ProtocolDescriptor(parsing: "struct r { const char *name; };", name: "r"), capacity: 2)
        #expect(throws: DelegateError.entryArrayIndex(type: "EntryArray of r", index: 0, count: 0)) {
            try functions.update(row: 0) { _ in }
        }
    }

    /// C walking the array while rows are appended sees each row whole: its name, which ends the walk
    /// while it is NULL, is written after its function. (Off under ThreadSanitizer: the walk reads the
    /// records without synchronization, as C does, which it would report.)
    @Test(.disabled(if: underThreadSanitizer)) func cWalkingTheArraySeesOnlyWholeRows() throws {
        let rows = 400
        let functions = TypedEntryArray(of: luaL_Reg.self, capacity: rows)
        let done = Atomic<Bool>(false)
        let torn = Atomic<Int>(0)
        nonisolated(unsafe) let base = UnsafeMutableRawPointer(functions.baseAddress)  // read as C reads it
        let stride = MemoryLayout<luaL_Reg>.stride
        let nameOffset = MemoryLayout<luaL_Reg>.offset(of: \.name)!
        let funcOffset = MemoryLayout<luaL_Reg>.offset(of: \.func)!
        let finished = DispatchSemaphore(value: 0)
        let walker = Thread {
            while !done.load(ordering: .acquiring) {
                var index = 0
                while index < rows {
                    let record = base + index * stride
                    guard record.advanced(by: nameOffset).load(as: UInt.self) != 0 else { break }
                    atomicMemoryFence(ordering: .acquiring)
                    if record.advanced(by: funcOffset).load(as: UInt.self) == 0 { torn.add(1, ordering: .relaxed) }
                    index += 1
                }
            }
            finished.signal()
        }
        walker.start()
        for index in 0..<rows {
            try functions.append { row in
                try row.setField(\.name, "f\(index)")
                try row.delegate.implement(\.func) { (_: OpaquePointer?) -> Int32 in 0 }
            }
        }
        done.store(true, ordering: .releasing)
        finished.wait()
        #expect(torn.load(ordering: .relaxed) == 0, "the walk saw a named row without its function")
        #expect(functions.count == rows)
        // Each name is the array's own copy of its String, not a pointer that lived only for the call.
        let names = (0..<rows).map { String(cString: functions.baseAddress[$0].name) }
        #expect(names == (0..<rows).map { "f\($0)" })
        #expect(Set((0..<rows).map { functions.baseAddress[$0].name }).count == rows)
    }

    @Test func aFillMayAppendToItsOwnArray() throws {
        let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 2)
        try functions.append { outer in
            try outer.setField(\.name, "outer")
            try functions.append { try $0.setField(\.name, "inner") }
        }
        // The inner row finished first, in the second record: C sees both once the outer one is whole.
        #expect(functions.count == 2)
        #expect(String(cString: functions.baseAddress[0].name) == "outer")
        #expect(String(cString: functions.baseAddress[1].name) == "inner")
    }
}
