// The examples of the DocC catalog about arrays of entries. Each region between `// doc:begin NAME` and
// `// doc:end` appears verbatim in a ```swift block of the docs.
import DelegateKit
import DelegateKitCGLib
import DelegateKitCLua
import Synchronization

/// Lua functions written in Swift, registered with `luaL_setfuncs` as the global table `counter`: the
/// closures share a Swift count. Runs `script` (which returns an integer) and returns its result.
public func runLuaWithSwiftFunctions(_ script: String) throws -> Int {
    // doc:begin entry-array-lua
    let count = Atomic<Int>(0)
    let functions = TypedEntryArray(of: luaL_Reg.self, capacity: 2)
    try functions.append { row in
        try row.setField(\.name, "add")
        try row.delegate.implement(\.func) { (lua: OpaquePointer?) -> Int32 in
            lua_pushinteger(lua, lua_Integer(count.add(Int(lua_tointegerx(lua, 1, nil)), ordering: .relaxed).newValue))
            return 1
        }
    }
    try functions.append { row in
        try row.setField(\.name, "value")
        try row.delegate.implement(\.func) { (lua: OpaquePointer?) -> Int32 in
            lua_pushinteger(lua, lua_Integer(count.load(ordering: .relaxed)))
            return 1
        }
    }
    let lua = luaL_newstate()!
    defer { lua_close(lua) }
    lua_createtable(lua, 0, 0)
    luaL_setfuncs(lua, functions.baseAddress, 0)   // NULL-terminated: the array ends with a record of zeros
    lua_setglobal(lua, "counter")
    // doc:end
    guard luaL_loadstring(lua, script) == LUA_OK, lua_pcallk(lua, 0, 1, 0, 0, nil) == LUA_OK else {
        throw LuaScriptError(message: String(cString: lua_tolstring(lua, -1, nil)))
    }
    return Int(lua_tointegerx(lua, -1, nil))
}

/// What a Lua script raised.
public struct LuaScriptError: Error {
    /// Lua's message.
    public let message: String
}

/// GIO actions whose `activate` functions are Swift closures, added to a `GSimpleActionGroup` with
/// `g_action_map_add_action_entries`; activates `quit` once and `zoom` with each of `zooms`, and returns
/// how often `quit` ran and the zoom last set.
public func activateSwiftActions(zooms: [Int32]) throws -> (quits: Int, zoom: Int32) {
    let quits = Atomic<Int>(0)
    let zoom = Atomic<Int32>(100)
    // doc:begin entry-array-gio
    let actions = TypedEntryArray(of: GActionEntry.self, capacity: 2)
    try actions.append { row in
        try row.setField(\.name, "quit")
        try row.delegate.implement(\.activate) { (_: OpaquePointer?, _: OpaquePointer?, _: gpointer?) in
            quits.add(1, ordering: .relaxed)
        }
    }
    try actions.append { row in
        try row.setField(\.name, "zoom")
        try row.setField(\.parameter_type, "i")   // the parameter's GVariant type: an int32
        try row.delegate.implement(\.activate) { (_: OpaquePointer?, parameter: OpaquePointer?, _: gpointer?) in
            zoom.store(g_variant_get_int32(parameter), ordering: .relaxed)
        }
    }
    let group = g_simple_action_group_new()
    g_action_map_add_action_entries(OpaquePointer(group), actions.baseAddress, gint(actions.count), nil)  // counted
    // doc:end
    defer { g_object_unref(group) }
    g_action_group_activate_action(OpaquePointer(group), "quit", nil)
    for value in zooms { g_action_group_activate_action(OpaquePointer(group), "zoom", g_variant_new_int32(value)) }
    return (quits.load(ordering: .relaxed), zoom.load(ordering: .relaxed))
}
