#ifndef DELEGATEKIT_FIXTURES_H
#define DELEGATEKIT_FIXTURES_H

/* C code that calls function pointers the way C libraries do, for DelegateKit's tests and demo. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- Scalars: every C scalar as argument and return. fx_call_T calls f; fx_ref_T is the same
   formula computed in C (a - b; a != b for bool; a + (b & 0xff) bytes for pointers). ---- */
#define FX_SCALARS(X) \
    X(bool, bool) X(i8, int8_t) X(u8, uint8_t) X(i16, int16_t) X(u16, uint16_t) X(i32, int32_t) \
    X(u32, uint32_t) X(i64, int64_t) X(u64, uint64_t) X(f32, float) X(f64, double) X(ld, long double) \
    X(ptr, void *)
#define FX_DECLARE_SCALAR(NAME, T) \
    T fx_call_##NAME(const void *f, T a, T b); \
    T fx_ref_##NAME(T a, T b);
FX_SCALARS(FX_DECLARE_SCALAR)
/* fx_ref_T after a struct of four doubles, which it ignores: a signature no call passes in registers
   alone, so that a call into C of each scalar takes its plan (or libffi's ffi_call). */
#define FX_DECLARE_AFTER_STRUCT(NAME, T) T fx_after_struct_##NAME(fx_pad pad, T a, T b);
typedef struct { double a, b, c, d; } fx_pad;
FX_SCALARS(FX_DECLARE_AFTER_STRUCT)

/* Calls f, an int64_t (int8_t, int16_t, bool), with whole registers whose bits above each narrow
   argument are set: the System V ABI leaves them undefined, and a callee must not read them. */
int64_t fx_call_dirty_narrow(const void *f);

/* ---- Many arguments: 16 mixed (8 integer, 8 floating), and 20 (10 int64 + 10 double) so both
   register files spill to the stack. Each argument is weighted by its position so order matters. ---- */
double fx_call_many16(const void *f);
double fx_ref_many16(void);
double fx_call_spill20(const void *f);
double fx_ref_spill20(void);
/* The same 16 arguments' formula as a function to call (fx_ref_many16 is it applied to FX_MANY16_ARGS). */
double fx_many16(int8_t a1, double a2, int16_t a3, float a4, int32_t a5, double a6, int64_t a7, float a8,
                 uint8_t a9, double a10, uint16_t a11, float a12, uint32_t a13, double a14, uint64_t a15, float a16);

/* ---- The arguments of two bugs of libffi's ffi_call on x86_64 (CallingC.md), for a call by plan:
   six structs of an integer and a float (a struct past 8 bytes whose first member takes the last
   integer register overwrites the first vector register: fixed in libffi 3.4.7), and five chars, a float
   and a struct of a char and a double (the float arrives as 0: libffi issue 574). Each returns a sum
   weighted by position. ---- */
typedef struct { unsigned long n; float f; } fx_long_float;
typedef struct { char c; double d; } fx_char_double;
double fx_six_long_floats(fx_long_float a, fx_long_float b, fx_long_float c, fx_long_float d, fx_long_float e,
                          fx_long_float f);
double fx_chars_float_pair(char a, char b, char c, char d, char e, float f, fx_char_double g);

/* ---- Variadic calls: fx_format_reference formats its arguments with fx_format() through C's own
   snprintf, the compiler applying the default argument promotions, for Swift's variadic call of
   snprintf to be compared with. fx_sum_variadic adds `count` promoted arguments, the kind of each given
   by `kinds` ('i' int, 'l' long, 'd' double, 'p' pointer's address, 'L' long double). ---- */
const char *fx_format(void);
int fx_format_reference(char *buffer, size_t size, int i, long l, double d, float f, char c, short s,
                        unsigned u, const char *text, void *p, unsigned char uc, bool b, long double ld,
                        unsigned long long ull, unsigned short us, signed char sc);
double fx_sum_variadic(const char *kinds, ...);
/* What fx_log_long_doubles (reached through fx_function) passes its hook in call 0 or 1, formatted by C's
   snprintf into `buffer`. */
int fx_format_long_doubles(int call, char *buffer, size_t size);

/* Return the whole register their first argument arrived in (rdi on x86_64; 0 elsewhere), to check
   what a caller put above a narrow argument: clang's callees take it as extended to 32 bits. */
uint64_t fx_raw_i8(int8_t value);
uint64_t fx_raw_u8(uint8_t value);
uint64_t fx_raw_i16(int16_t value);
uint64_t fx_raw_bool(bool value);

/* The address of the fixture function named `name` (the fx_ref_ functions, fx_many16, fx_sum_variadic),
   or NULL: the test executable does not export its symbols for dlsym to find. */
const void *fx_function(const char *name);

/* The benchmark's six mixed arguments. */
int32_t fx_call_mixed6(const void *f, void *p, int32_t a, int64_t b, double c, float d, void *q);

/* Calls `void f(int64_t)` with value: a callback whose result C does not take. */
void fx_call_void_i64(const void *f, int64_t value);

/* ---- Structs by value, 1 to 64 bytes, nested, with long double: f(a, b) returns field-wise a + b.
   Each struct's fields are listed (flattened, with offsetof) so both sides compute exact values. ---- */
typedef struct { uint8_t a; } S1;
typedef struct { uint8_t a, b; } S2;
typedef struct { uint8_t a, b, c; } S3;
typedef struct { uint16_t a, b; } S4;
typedef struct { uint8_t a[5]; } S5;
typedef struct { uint16_t a, b, c; } S6;
typedef struct { uint8_t a[7]; } S7;
typedef struct { int32_t a; float b; } S8;
typedef struct { float a, b; } SFF;
typedef struct { float a, b, c; } S12;
typedef struct { double a, b; } SDD;
typedef struct { int64_t a; double b; } SLD16;
typedef struct { uint8_t tag; double value; } SPair;
typedef struct { uint8_t a[17]; } S17;
typedef struct { double a; int64_t b; float c; } S24;
typedef struct { double a, b, c, d; } S32;
typedef struct { uint8_t a[33]; } S33;
typedef struct { int64_t a[8]; } S64;
typedef struct { S2 inner; double d; } N1;
typedef struct { struct { float x, y; } point; int64_t id; S3 tag; } N2;
typedef struct { SDD first; SDD second; } N3;
typedef struct { long double value; int32_t tag; } SLongDouble;

#define FX_STRUCTS(X) \
    X(S1) X(S2) X(S3) X(S4) X(S5) X(S6) X(S7) X(S8) X(SFF) X(S12) X(SDD) X(SLD16) X(SPair) X(S17) \
    X(S24) X(S32) X(S33) X(S64) X(N1) X(N2) X(N3) X(SLongDouble)

typedef enum { FX_U8, FX_U16, FX_I32, FX_I64, FX_F32, FX_F64, FX_LD } fx_kind;
typedef struct { size_t offset; fx_kind kind; } fx_field;
/* The kind after `kind`, in a circle: an enum by value in and out. */
fx_kind fx_next_kind(fx_kind kind);
/* `long double` for the tests of every CPU, where Swift has no type for it (Float80 is x86_64's only):
   stores n / 16 at `out`; adds the values at `a` and `b` into `out`; the bytes of a long double that hold
   its value (10 of x87's 16, all 16 of aarch64's binary128). */
void fx_long_double_store(void *out, int64_t n);
void fx_long_double_add(const void *a, const void *b, void *out);
size_t fx_long_double_value_bytes(void);

#define FX_DECLARE_STRUCT(S) \
    S fx_call_##S(const void *f, S a, S b); \
    S fx_ref_##S(S a, S b); \
    const fx_field *fx_fields_##S(size_t *count); \
    size_t fx_sizeof_##S(void); \
    size_t fx_alignof_##S(void);
FX_STRUCTS(FX_DECLARE_STRUCT)

/* ---- A plugin "library": a table with a data member, a required method and optional methods that
   it calls only when their slot is non-NULL, like most C libraries do. ---- */
typedef struct { float x, y; } fx_point;
typedef struct fx_plugin {
    int32_t version;
    int32_t (*start)(void *context);                      /* required */
    int64_t (*transform)(void *context, int64_t value);   /* optional: identity when NULL */
    void (*log)(void *context, const char *message);      /* optional */
    double (*weigh)(void *context, fx_point point);       /* optional: weight 1 when NULL */
} fx_plugin;

enum { FX_CALLED_START = 1, FX_CALLED_TRANSFORM = 2, FX_CALLED_LOG = 4, FX_CALLED_WEIGH = 8 };

/* Runs the plugin over values; returns the weighted sum of transformed values, or -1 when the
   required start is NULL or fails. *called gets a bit per method that was called. */
double fx_plugin_run(const fx_plugin *plugin, void *context, const int64_t *values, size_t count, uint32_t *called);
/* Calls plugin->transform(context, value) if the slot is set; otherwise returns value and sets *called false. */
int64_t fx_plugin_transform(const fx_plugin *plugin, void *context, int64_t value, bool *called);
size_t fx_plugin_offset(int member); /* 0 version, 1 start, 2 transform, 3 log, 4 weigh */
size_t fx_plugin_size(void);

/* ---- Structs by value in a table Swift imports: fx_point, which the tests make a CValue, taken and
   returned; fx_extent, which they leave without one, so its member cannot be described. ---- */
typedef struct { int32_t width, height; } fx_extent;
typedef struct fx_geometry {
    fx_point (*midpoint)(fx_point a, fx_point b);
    int64_t (*area)(fx_extent extent);
} fx_geometry;
/* Calls geometry->midpoint(a, b), or returns {-1, -1} when the slot is NULL. */
fx_point fx_geometry_midpoint(const fx_geometry *geometry, fx_point a, fx_point b);

/* ---- When a call was made, for checking what a removal promises: no call made after it returned runs
   what it removed. fx_epoch_advance moves a global counter on (after a removal returns) and returns the
   new value; fx_epoch_note records the counter in the calling thread right before it calls (the hammer
   does so before each call); fx_epoch_noted returns that record (-1 before any). ---- */
int64_t fx_epoch_advance(void);
void fx_epoch_note(void);
int64_t fx_epoch_noted(void);

/* ---- Threads: `threads` pthreads each call plugin->transform(NULL, i) `iterations` times, loading the
   slot afresh every call. A result must be i * 1000 + k with 0 <= k < implementations; a zero result
   for i > 0 (the default value of a call that arrived after its implementation was removed) counts
   with the NULL slots. ---- */
typedef struct fx_hammer fx_hammer;
fx_hammer *fx_hammer_start(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations);
/* The same with calls made by threads that each make one call and end (at most `threads` at a time, the
   values 1, 2, …): a thread's first call is the one that takes an entry's rare path. */
fx_hammer *fx_hammer_start_fresh(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations);
/* transform as a callback of more arguments than registers: all but the first two arguments are on the
   caller's stack (x86_64) or the last one is (aarch64). */
typedef int64_t (*fx_wide_transform)(void *context, int64_t value, int64_t, int64_t, int64_t, int64_t, int64_t,
                                     int64_t, int64_t);
/* fx_hammer_start or fx_hammer_start_fresh (as `fresh` says), calling the slot as an fx_wide_transform whose
   value arguments are all i, where a DynamicDelegate describes transform so: each call then enters through
   the array entry where the register path runs. */
fx_hammer *fx_hammer_start_wide(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations,
                                bool fresh);
/* transform as a callback of eight parameters, the most a fixed-arity typed closure takes: eight integers,
   more than the register path's five, the last two on the caller's stack (x86_64). */
typedef int64_t (*fx_eight_transform)(void *context, int64_t value, int64_t, int64_t, int64_t, int64_t, int64_t,
                                      int64_t);
/* fx_hammer_start_wide's hammer calling the slot as an fx_eight_transform whose value arguments are all i. */
fx_hammer *fx_hammer_start_eight(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations,
                                 bool fresh);
/* transform as a callback taking and returning a struct of four int64_t: passed and returned in memory on
   x86_64 (the array entry's result in memory), by reference and through x8 on aarch64. */
typedef struct { int64_t a, b, c, d; } fx_quad;
typedef fx_quad (*fx_quad_transform)(void *context, fx_quad value);
/* fx_hammer_start_wide's hammer calling the slot as an fx_quad_transform whose value's fields are all i;
   a result whose fields differ counts as wrong. */
fx_hammer *fx_hammer_start_quad(const fx_plugin *plugin, int threads, int64_t iterations, int64_t implementations,
                                bool fresh);
/* What a wrong result was beyond i * 1000 (result - i * 1000) for the first one a thread saw; 0 when none
   (call it once every thread has finished, before joining). */
int64_t fx_hammer_first_wrong(const fx_hammer *hammer);
/* Makes every thread stop after its call in progress, however many it was to make. */
void fx_hammer_stop(fx_hammer *hammer);
/* Whether every thread has finished its calls (the hammer still needs joining). */
bool fx_hammer_finished(const fx_hammer *hammer);
/* Waits for the threads; returns calls made, and the counts of wrong results and of NULL slots seen. */
int64_t fx_hammer_join(fx_hammer *hammer, int64_t *wrong, int64_t *null_slots);

/* ---- Whether what a call runs is released while it runs: a closure calls fx_flight_enter(id) first and
   fx_flight_leave(id) last (ids are taken modulo 65536), and an object it captured calls
   fx_flight_released(id) when it is released, which counts a violation when a call of that closure is
   in flight; fx_flight_violation_count returns the count. ---- */
void fx_flight_enter(int64_t id);
void fx_flight_leave(int64_t id);
void fx_flight_released(int64_t id);
int64_t fx_flight_violation_count(void);

/* ---- Callback lifetimes. An "operation" completes later, calling its completion exactly once, from a
   thread of the fixture's own. A "handler" is registered GLib-style with user data and a destroy
   notification, called when the handler is replaced or cleared; each thread has its own handler. ---- */
typedef void (*fx_completion)(void *user_data, int32_t status);
void fx_start_operation(fx_completion done, void *user_data);
/* Completes every pending operation on a new thread and waits for it; returns how many completed. */
int fx_complete_operations(int32_t status);
/* Cancels every pending operation without calling its completion, as libuv's uv_cancel drops a work
   request's work callback; returns how many it dropped. */
int fx_cancel_operations(void);
void fx_set_handler(int64_t (*handler)(int64_t), void *user_data, void (*destroy)(void *));
int64_t fx_call_handler(int64_t value);
void fx_clear_handler(void);

/* ---- Calls that never return (leaving.c). ----
   fx_caller: a thread of its own that calls plugin->transform(NULL, value) once; fx_caller_join says
   whether that call returned (1, with its result) or the thread ended inside it (0: pthread_exit, or
   fx_caller_cancel while the callback sat in a cancellation point). */
typedef struct fx_caller fx_caller;
fx_caller *fx_caller_start(const fx_plugin *plugin, int64_t value);
/* The same thread calling call(target) instead, such as fx_call_i64x12(f) (DelegateKitArities.h). */
fx_caller *fx_caller_start_calling(int64_t (*call)(const void *target), const void *target);
void fx_caller_cancel(fx_caller *caller);
int fx_caller_join(fx_caller *caller, int64_t *result);
/* Calls plugin->transform(NULL, value) at a setjmp site, as a libjpeg user's decoding function does; the
   callback may leave it with fx_jump_back(code), which longjmps to the calling thread's innermost site.
   Returns 0 (and *result) when the call returned, else the code. fx_jump_many makes `count` such calls
   (value 0, 1, …) and returns how many jumped back. */
int fx_call_at_setjmp(const fx_plugin *plugin, int64_t value, int64_t *result);
void fx_jump_back(int code) __attribute__((noreturn));
/* The calling thread's innermost site, for setjmp sites of other fixtures (jpeg.c). */
#include <setjmp.h>
jmp_buf **fx_jump_site(void);
/* libjpeg's own pattern (its example.c): decodes `data` at a setjmp site with `error_manager` (a struct
   jpeg_error_mgr, whose error_exit must leave by fx_jump_back); returns 0 and the image's size, or the
   code of the jump back. */
int fx_jpeg_decode(const unsigned char *data, size_t size, void *error_manager, int *width, int *height);
int64_t fx_jump_many(const fx_plugin *plugin, int64_t count);
/* A pool thread: each fx_pool_thread_call has it call fx_call_at_setjmp(plugin, value) and waits for that, then
   the thread idles; returns how many of its calls jumped back so far. */
typedef struct fx_pool_thread fx_pool_thread;
fx_pool_thread *fx_pool_thread_start(const fx_plugin *plugin);
int64_t fx_pool_thread_call(fx_pool_thread *worker, int64_t value);
void fx_pool_thread_stop(fx_pool_thread *worker);
/* The bytes glibc's malloc holds for the program (in its arenas and mapped), for tests that a loop leaks
   nothing; 0 under a sanitizer's allocator. */
size_t fx_malloc_bytes_in_use(void);
/* The bytes malloc handed out at `pointer` (malloc_usable_size): at least what was asked, for tests that
   a pointer lies inside an allocation. */
size_t fx_malloc_usable_size(void *pointer);
/* Forks: the child runs child(context) with an alarm of `seconds` and exits with what it returns; the
   parent returns the child's exit status, or 128 + the signal that ended it. */
int fx_fork_and_run(int (*child)(void *), void *context, unsigned seconds);

/* ---- GLib's callback forms, without GLib (callbacks.c). A "registry" stores handlers under an erased
   function pointer type, as GLib's signals store a GCallback, with a two-argument destroy notification
   (GClosureNotify's shape); it refuses unknown names, returning 0 and never calling the notification. ---- */
typedef void (*fx_erased_fn)(void);
typedef void (*fx_closure_notify)(void *data, void *closure);
/* "value" handlers are int64_t (*)(int64_t value, void *data); "event" handlers void (*)(int64_t, void *). */
unsigned fx_registry_connect(const char *name, fx_erased_fn handler, void *data, fx_closure_notify destroy);
/* Calls every "value" handler in connection order, each on the previous result; returns the last. */
int64_t fx_registry_emit_value(int64_t value);
/* Calls every "event" handler `count` times from a thread of its own (0, 1, …, count - 1), and joins it. */
void fx_registry_emit_events(int64_t count);
/* Calls the destroy notification of handler `id` and forgets it; returns 0 for an unknown id. */
int fx_registry_disconnect(unsigned id);
/* Disconnects every handler. */
void fx_registry_clear(void);

/* A plugin table that C allocates and owns: version 1, start returning 1, transform returning value * 2,
   log and weigh NULL. */
fx_plugin *fx_owned_plugin_new(void);
void fx_owned_plugin_free(fx_plugin *plugin);
/* C's own transform, to compare a restored slot with. */
const void *fx_owned_plugin_transform(void);

/* A cancellable operation: a thread of its own waits until it is cancelled or completed, then calls
   done(user_data, status) once: the status given to fx_cancellable_complete, or -125 when cancelled
   first. fx_cancellable_join waits for that thread and frees the operation. */
typedef struct fx_cancellable fx_cancellable;
fx_cancellable *fx_cancellable_start(fx_completion done, void *user_data);
void fx_cancellable_cancel(fx_cancellable *operation);
void fx_cancellable_complete(fx_cancellable *operation, int32_t status);
void fx_cancellable_join(fx_cancellable *operation);

/* ---- glibc stdio cookies: Swift's Glibc module does not declare fopencookie. ---- */
/* Opens a FILE whose I/O goes through `functions`, a cookie_io_functions_t laid out by the caller. */
FILE *fx_fopencookie(void *cookie, const char *mode, const void *functions);
size_t fx_cookie_io_functions_size(void);
size_t fx_cookie_io_functions_offset(int member); /* 0 read, 1 write, 2 seek, 3 close */
/* fprintf is variadic, which Swift cannot call. */
int fx_fprintf_record(FILE *file, const char *name, int value, double ratio);

/* ---- nftw, declared here with a plain pointer because it needs _XOPEN_SOURCE. ---- */
int fx_nftw(const char *directory, const void *callback, int descriptors, int flags);
int fx_ftw_f(void);     /* FTW_F */
int fx_ftw_phys(void);  /* FTW_PHYS */

/* ---- The C compiler's layout of sqlite3_io_methods, sqlite3_vfs, sqlite3_module and glibc's
   cookie_io_functions_t, by name: offsetof a member (-1 when not listed), the member count, sizeof. ---- */
long fx_member_offset(const char *structure, const char *member);
int fx_member_count(const char *structure);
/* pipe2(fds, O_CLOEXEC): a pipe no other child spawned meanwhile inherits. */
int fx_pipe_cloexec(int fds[2]);
/* The path the dynamic loader opened `library` under (as dlerror() names it), found through `symbol`; NULL
   if either is missing. */
const char *fx_loaded_path(const char *library, const char *symbol);
/* Whether process_vm_readv can read this process's own memory (qemu-user answers ENOSYS). */
bool fx_process_vm_readv_works(void);
/* The bytes malloc has handed out and not had back, its own mappings included (mallinfo2): what a leak
   grows byte for byte, where resident memory moves by pages and with the allocator's caches. */
size_t fx_heap_in_use(void);
long fx_struct_size(const char *structure);

/* prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN): from now on no mapping of this process may become
   executable (Linux 6.3 and later). Returns 0, or -1 with errno set. */
int fx_forbid_executable_memory(void);
/* Whether this kernel (or emulator) knows PR_SET_MDWE: 1 or 0. qemu-user does not pass it on. */
int fx_executable_memory_forbiddable(void);
/* Whether this process may order other threads' memory with membarrier(2)'s private expedited command, as
   DelegateKit's removers ask it to: 1 or 0 (a kernel without it, a seccomp filter that refuses it). */
int fx_membarrier_available(void);

/* What code at `address` is: 1 a slot of DelegateKit's trampoline table that enters a register entry (either
   kind), 2 one that enters libffi (the static-chain register), 0 anything else. Read from its instructions. */
int fx_code_kind(const void *address);

/* The entry a slot of the trampoline table at `address` jumps to: its entry word, found from the slot's own
   jump instruction. Only for code fx_code_kind says is a slot. */
const void *fx_slot_entry(const void *address);

/* The permissions ("r-xp") and the file (or "" for anonymous memory) of the mapping holding `address`, from
   /proc/self/maps: 0, or -1 when no mapping holds it. `permissions` holds 5 bytes. */
int fx_mapping_of(const void *address, char *permissions, char *path, size_t path_size);

/* The mappings of /proc/self/maps that are writable and executable: their count, and their lines in
   `lines` (as many as fit). */
int fx_writable_executable_mappings(char *lines, size_t size);

#include "DelegateKitReadying.h"
#include "DelegateKitArities.h"
#endif
