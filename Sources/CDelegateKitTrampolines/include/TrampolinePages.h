#ifndef CDELEGATEKIT_TRAMPOLINE_PAGES_H
#define CDELEGATEKIT_TRAMPOLINE_PAGES_H

#include "RegisterTrampoline.h"

/* ---- Trampoline pages of DelegateKit's own (x86_64 Linux) ----
   The register path's trampoline, in pages DelegateKit maps itself within 2 GiB of the entry, so that it
   ends in a near `jmp rel32` to the entry rather than an indirect jump through memory; each page serves
   one entry. A page is never writable and executable at once: written while read-write, then made
   read-execute for good; the contexts live in the read-write page after it. A process that may not make
   memory executable (PR_SET_MDWE) or has no free address near the entry gets no pages, and the caller uses
   libffi's closure memory. Private anonymous mappings: a forked child has its own copy.

   A slot freed here is handed out again, as libffi's closure memory is; the pages themselves stay mapped
   (at most the process's peak number of closures per entry). */

/* Writes a trampoline entering `entry` with `context` into a page, or returns NULL (no page can be made;
   see above): then use cffi_register_closure_create. Returns the slot's handle, for the functions below,
   and stores the code address in *code. Thread-safe. */
void *cffi_trampoline_create(cffi_register_entry entry, void *context, void **code);

/* Changes the context calls receive, before C can call the code (as cffi_closure_set_user_data). */
void cffi_trampoline_set_context(void *handle, void *context);

/* Hands the slot back; C must not call its code any more. Thread-safe. */
void cffi_trampoline_free(void *handle);

#endif
