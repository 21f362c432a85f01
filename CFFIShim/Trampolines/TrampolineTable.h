/* The trampoline table's shape, shared by TrampolineTable.S (its code) and Trampolines.c (its mappings and
   data words). Private to this target. */
#ifndef CDELEGATEKIT_TRAMPOLINE_TABLE_H
#define CDELEGATEKIT_TRAMPOLINE_TABLE_H

/* The table's bytes, and each mapping's data after it: the largest page size aarch64 Linux runs with. */
#define CFFI_TABLE_SIZE 65536
/* A slot's code, and its data words at the same offset CFFI_TABLE_SIZE further: 0 the context, 1 the
   entry, 2 while the slot is free the next free slot's words, 3 the slot's mapping. */
#define CFFI_SLOT_SIZE 32
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
