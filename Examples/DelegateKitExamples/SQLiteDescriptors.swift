import DelegateKit

/// SQLite's VFS tables, described from the declarations in `sqlite3.h`.
public enum SQLiteDescriptors {
    /// SQLite's own typedef names, for parsing its declarations.
    public static let typedefs: [String: CType] = [
        "sqlite3_int64": .int64, "sqlite_int64": .int64, "sqlite3_uint64": .uint64, "sqlite_uint64": .uint64,
        "sqlite3_filename": .pointer, "sqlite3_syscall_ptr": .pointer,
    ]

    private static func method(_ name: String, _ declaration: String) -> ProtocolDescriptor.Member {
        do {
            return .method(MethodDescriptor(name: name, signature: try CSignature(parsing: declaration, typedefs: typedefs)))
        } catch {
            preconditionFailure("\(name): \(error)")
        }
    }

    /// `struct sqlite3_io_methods`, version 3.
    public static let ioMethods = ProtocolDescriptor(name: "sqlite3_io_methods", members: [
        .field("iVersion", .int32),
        method("xClose", "int (*)(sqlite3_file*)"),
        method("xRead", "int (*)(sqlite3_file*, void*, int iAmt, sqlite3_int64 iOfst)"),
        method("xWrite", "int (*)(sqlite3_file*, const void*, int iAmt, sqlite3_int64 iOfst)"),
        method("xTruncate", "int (*)(sqlite3_file*, sqlite3_int64 size)"),
        method("xSync", "int (*)(sqlite3_file*, int flags)"),
        method("xFileSize", "int (*)(sqlite3_file*, sqlite3_int64 *pSize)"),
        method("xLock", "int (*)(sqlite3_file*, int)"),
        method("xUnlock", "int (*)(sqlite3_file*, int)"),
        method("xCheckReservedLock", "int (*)(sqlite3_file*, int *pResOut)"),
        method("xFileControl", "int (*)(sqlite3_file*, int op, void *pArg)"),
        method("xSectorSize", "int (*)(sqlite3_file*)"),
        method("xDeviceCharacteristics", "int (*)(sqlite3_file*)"),
        method("xShmMap", "int (*)(sqlite3_file*, int iPg, int pgsz, int, void volatile**)"),
        method("xShmLock", "int (*)(sqlite3_file*, int offset, int n, int flags)"),
        method("xShmBarrier", "void (*)(sqlite3_file*)"),
        method("xShmUnmap", "int (*)(sqlite3_file*, int deleteFlag)"),
        method("xFetch", "int (*)(sqlite3_file*, sqlite3_int64 iOfst, int iAmt, void **pp)"),
        method("xUnfetch", "int (*)(sqlite3_file*, sqlite3_int64 iOfst, void *p)"),
    ])

    /// `struct sqlite3_vfs`, version 3.
    public static let vfs = ProtocolDescriptor(name: "sqlite3_vfs", members: [
        .field("iVersion", .int32),
        .field("szOsFile", .int32),
        .field("mxPathname", .int32),
        .field("pNext", .pointer),
        .field("zName", .pointer),
        .field("pAppData", .pointer),
        method("xOpen", "int (*)(sqlite3_vfs*, sqlite3_filename zName, sqlite3_file*, int flags, int *pOutFlags)"),
        method("xDelete", "int (*)(sqlite3_vfs*, const char *zName, int syncDir)"),
        method("xAccess", "int (*)(sqlite3_vfs*, const char *zName, int flags, int *pResOut)"),
        method("xFullPathname", "int (*)(sqlite3_vfs*, const char *zName, int nOut, char *zOut)"),
        method("xDlOpen", "void *(*)(sqlite3_vfs*, const char *zFilename)"),
        method("xDlError", "void (*)(sqlite3_vfs*, int nByte, char *zErrMsg)"),
        method("xDlSym", "void (*(*)(sqlite3_vfs*,void*, const char *zSymbol))(void)"),
        method("xDlClose", "void (*)(sqlite3_vfs*, void*)"),
        method("xRandomness", "int (*)(sqlite3_vfs*, int nByte, char *zOut)"),
        method("xSleep", "int (*)(sqlite3_vfs*, int microseconds)"),
        method("xCurrentTime", "int (*)(sqlite3_vfs*, double*)"),
        method("xGetLastError", "int (*)(sqlite3_vfs*, int, char *)"),
        method("xCurrentTimeInt64", "int (*)(sqlite3_vfs*, sqlite3_int64*)"),
        method("xSetSystemCall", "int (*)(sqlite3_vfs*, const char *zName, sqlite3_syscall_ptr)"),
        method("xGetSystemCall", "sqlite3_syscall_ptr (*)(sqlite3_vfs*, const char *zName)"),
        method("xNextSystemCall", "const char *(*)(sqlite3_vfs*, const char *zName)"),
    ])
}
