import DelegateKit
import Testing

/// C signature text: what parses to what, and what is refused where.
@Suite struct CDeclarationParserTests {
    @Test(arguments: [
        ("int (const void *, const void *)", CSignature(.int32, [.pointer, .pointer])),
        ("ssize_t (void *, char *, size_t)", CSignature(.int64, [.pointer, .pointer, .size])),
        ("int (void *, int64_t *, int)", CSignature(.int32, [.pointer, .pointer, .int32])),
        ("int (*)(sqlite3_file *, void *, int iAmt, long long iOfst)", CSignature(.int32, [.pointer, .pointer, .int32, .int64])),
        ("void (void)", CSignature(.void, [])),
        ("void ()", CSignature(.void, [])),
        ("unsigned long long f(short int a, signed char b, unsigned char c, _Bool d, long double e, float f, double g)",
         CSignature(.uint64, [.int16, .int8, .uint8, .bool, .longDouble, .float, .double])),
        ("unsigned (unsigned short, long unsigned int, long int, signed, bool)",
         CSignature(.uint32, [.uint16, .uint64, .int64, .int32, .bool])),
        ("void (*(*)(int))(void)", CSignature(.pointer, [.int32])),
        ("int (int (*callback)(void *), void *context)", CSignature(.int32, [.pointer, .pointer])),
        ("char *strcpy(char *restrict dest, const char *restrict src);", CSignature(.pointer, [.pointer, .pointer])),
        ("enum color (enum color, struct node *)", CSignature(.int32, [.int32, .pointer])),
        ("int (int values[], int count, char name[16])", CSignature(.int32, [.pointer, .int32, .pointer])),
        ("int /* result */ (void * /* p */) // trailing", CSignature(.int32, [.pointer])),
        ("uintptr_t (intptr_t, ptrdiff_t, off_t, uint8_t, int16_t, uint32_t)",
         CSignature(.uint64, [.int64, .int64, .int64, .uint8, .int16, .uint32])),
        ("const volatile int * const (* const)(FILE *)", CSignature(.pointer, [.pointer])),
        ("int (compare)(const void *, const void *)", CSignature(.int32, [.pointer, .pointer])),
        // Header lines as users paste them: a typedef of a function-pointer type is that type.
        ("typedef int (*lua_CFunction)(lua_State *L);", CSignature(.int32, [.pointer])),
        ("typedef size_t (*curl_write_callback)(char *, size_t, size_t, void *);",
         CSignature(.size, [.pointer, .size, .size, .pointer])),
        ("typedef void (*xmlGenericErrorFunc)(void *ctx, const char *msg)", CSignature(.void, [.pointer, .pointer])),
        // A variadic function type: the named arguments, and `...`.
        ("typedef void (*xmlGenericErrorFunc)(void *ctx, const char *msg, ...)", CSignature(.void, [.pointer, .pointer], isVariadic: true)),
        ("int printf(const char *format, ...)", CSignature(.int32, [.pointer], isVariadic: true)),
    ])
    func parses(_ text: String, _ expected: CSignature) throws {
        #expect(try CSignature(parsing: text) == expected)
    }

    @Test func describesInCNotation() throws {
        #expect(String(describing: try CSignature(parsing: "int (const void *, const void *)")) == "int32_t (void *, void *)")
        #expect(String(describing: CSignature(.void, [])) == "void (void)")
        #expect(String(describing: try CSignature(parsing: "void (*)(void *, const char *, ...)")) == "void (void *, void *, ...)")
        #expect(CSignature(.int32, [.pointer], isVariadic: true) != CSignature(.int32, [.pointer]))
        #expect(String(describing: CSignature(.structure([.uint8, .double]), [.size, .longDouble]))
            == "struct { uint8_t; double; } (size_t, long double)")
    }

    @Test(arguments: [
        ("int (void *, )", 1, 14, "expected a type, found ')'"),
        ("int (struct stat)", 1, 6, "the layout of 'struct stat' is unknown, so it can only be used behind a pointer ('struct stat *'); "
            + "by value it needs its definition in the text or `typedefs: [\"struct stat\": .structure([…])]`"),
        ("int (sqlite3_int64)", 1, 6, "the layout of 'sqlite3_int64' is unknown, so it can only be used behind a pointer ('sqlite3_int64 *'); "
            + "by value it needs `typedefs: [\"sqlite3_int64\": …]`"),
        ("int (...)", 1, 6, "'...' needs a named parameter before it"),
        ("long float (void)", 1, 1, "'float long' is not a valid combination of type words"),
        ("int (void, int)", 1, 6, "'void' is only allowed alone, as in '(void)'; a parameter cannot have type void"),
        ("int", 1, 1, "expected a function type such as `int (void *)` or `int (*)(void *)`, found 'int'"),
        ("int (int", 1, 9, "expected ')' or ',' after a parameter, found the end of the text"),
        ("int (int) extra", 1, 11, "expected the end of the declaration, found 'extra'"),
        ("int\n  (int /* never closed", 2, 8, "the comment that starts here is not closed with '*/'"),
        ("int (int @)", 1, 10, "unexpected character '@'"),
        ("int (struct { int x; })", 1, 13, "a struct body is not allowed in a signature; "
            + "give its layout in `typedefs:` (\"struct tag\": .structure([…])) and write `struct tag`"),
        ("int (*)(int)(int)", 1, 8, "a function cannot return a function"),
        ("int (*)(int)[4]", 1, 8, "a function cannot return an array"),
        ("int (struct tag { int x; })", 1, 17, "a struct body is not allowed in a signature; "
            + "give its layout in `typedefs:` (\"struct tag\": .structure([…])) and write `struct tag`"),
        // Words C reserves are never read as names: `float _Imaginary` is not `float`.
        ("float _Imaginary (void)", 1, 7, "'_Imaginary' is not supported: DelegateKit has no C type for imaginary numbers"),
        ("_Complex int (void)", 1, 1, "'_Complex int' is not a valid combination of type words"),
        ("long __int128 (void)", 1, 1, "'__int128 long' is not a valid combination of type words"),
        ("int f(_Float128 x)", 1, 7, "'_Float128' is not supported: DelegateKit has no C type for this floating-point format"),
        ("__float128 (void)", 1, 1, "'__float128' is not supported: DelegateKit has no C type for this floating-point format"),
        ("int (int typedef)", 1, 10, "'typedef' can only begin a declaration, as in `typedef int (*callback)(void *);`"),
        ("int (sizeof)", 1, 6, "'sizeof' is a C keyword, not part of a type"),
        // An unknown word before the type: a header's export or calling-convention macro.
        ("CURL_EXTERN CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...);", 1, 1,
         "'CURL_EXTERN' is not a type DelegateKit knows, and 'CURLcode' follows it: if it is a macro (an export or "
            + "calling-convention macro), leave it out"),
        ("LUA_API int (lua_gettop) (lua_State *L);", 1, 1,
         "'LUA_API' is not a type DelegateKit knows, and 'int' follows it: if it is a macro (an export or "
            + "calling-convention macro), leave it out"),
        ("CURL_EXTERN struct curl_slist *curl_slist_append(struct curl_slist *, const char *);", 1, 1,
         "'CURL_EXTERN' is not a type DelegateKit knows, and 'struct' follows it: if it is a macro (an export or "
            + "calling-convention macro), leave it out"),
    ])
    func refuses(_ text: String, _ line: Int, _ column: Int, _ message: String) throws {
        let error = #expect(throws: DelegateError.self) { _ = try CSignature(parsing: text) }
        #expect(error == .syntax(message: message, text: text, line: line, column: column))
    }
}
