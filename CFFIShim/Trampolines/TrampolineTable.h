/* The trampoline table's shape, shared by TrampolineTable.S (its code) and Trampolines.c (its mappings and
   data words). Private to this target. */
#ifndef CDELEGATEKIT_TRAMPOLINE_TABLE_H
#define CDELEGATEKIT_TRAMPOLINE_TABLE_H

/* The table's bytes, and each mapping's data after it: the largest page size aarch64 Linux runs with. */
#define CFFI_TABLE_SIZE 65536
/* A slot's code. */
#define CFFI_SLOT_SIZE 32
/* A slot's data words, slot i's at i * CFFI_WORDS_SIZE in the data CFFI_TABLE_SIZE bytes after the table:
   0 the context (while the slot is free, the next free slot's words), 1 the entry. */
#define CFFI_WORDS_SIZE 16
/* How many slots of each kind a mapping holds, in this order: REGISTERS, STATIC_CHAIN. */
#define CFFI_REGISTER_SLOTS 1280
#define CFFI_CHAIN_SLOTS 768

/* How cffi_enter_array_composite returns a struct: Trampolines.h's CFFI_ARRAY_RESULT_*, which C declares
   and this file spells for the assembler (Trampolines.c checks they agree). */
#define CFFI_RESULT_INTEGER_SSE 1
#define CFFI_RESULT_SSE_INTEGER 2
#define CFFI_RESULT_MEMORY 3
#define CFFI_RESULT_X87 4

#endif
