#ifndef CDELEGATEKIT_CALLBACK_EXIT_H
#define CDELEGATEKIT_CALLBACK_EXIT_H

/* A way out of a callback that must not return to its C caller (libpng's png_error, Lua's lua_error, a
   longjmp to a setjmp site), asked for by the Swift closure and taken by DelegateKit's entry once the
   closure has returned: so the jump skips no Swift frame that still holds something, and leaks nothing.
   The Swift half is Sources/DelegateKit/Closures/CallbackExit.swift.

   One request per thread. A request replaces an earlier one not yet taken (a nested callback's).
   Who takes it: the entry of a closure that may leave (a CClosure's) calls cffi_exit_take after the
   closure; a slot's entries do not, as their calls would all pay for the check, so whoever asks for an
   exit inside a slot's call also marks the thread's call record (cffi_note_exit_request), and that
   call's cffi_leave takes it (CDelegateKitRetirement/Retirement.h). This file knows nothing of call
   records: the retirement target calls it, never the other way round.

   Also the setjmp site (cffi_call_catching_jump), where a longjmp out of a callback lands. */
#include <CDelegateKitLibffi/Libffi.h>
#include <setjmp.h>

/* Asks to leave by longjmp(target, value). */
void cffi_exit_request_jump(struct __jmp_buf_tag *target, int value);

/* Asks to leave by calling `function` as `cif` describes with `arguments` (libffi's form). The argument
   values are copied now, so their memory may go before the exit is taken. Returns 0, or -1 when they
   take more room than a request holds (CFFI_EXIT_BYTES), or the result more than CFFI_EXIT_RESULT_BYTES,
   and nothing was asked. */
#define CFFI_EXIT_BYTES 512
#define CFFI_EXIT_RESULT_BYTES 64
int cffi_exit_request_call(ffi_cif *cif, const void *function, void **arguments);

/* Takes this thread's request, if any: then never returns. A called function that returns after all
   breaks its promise; that stops the program with a message, as nothing can go on from here. */
void cffi_exit_take(void);

/* Calls `function` as cffi_call does, at a setjmp site: C code, or a closure, may longjmp to `target`
   while the call runs. Returns 0 when the function returned, else the value given to longjmp (1 for 0).
   The caller forgets, after a jump back, its thread's DelegateKit calls that started inside (the frames
   the jump skipped run no cleanup: cffi_forget_calls_from). `target` must not be jumped to after this
   returns. */
int cffi_call_catching_jump(struct __jmp_buf_tag *target, ffi_cif *cif, const void *function, void *result,
                            void **arguments);

#endif
