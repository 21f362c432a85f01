/* Calls of C by a plan made once per signature, the way cffi_call passes ffi_call by (see Libffi.h).

   ffi_call works out on every call where each argument goes: its class, its registers, its stack words
   (for a struct of four int64_t, some 600 instructions of a 640-instruction call). All of that depends on
   the signature alone, so cffi_prep_cif records it once, as a list of moves: so many bytes of argument k,
   from this offset, to that register or stack word, extended as the ABI wants. A call then only copies
   the words into a block and cffi_call_block (CDelegateKitTrampolines) loads the registers, pushes the
   stack words and calls. The plan follows the same rules as the array entry (Libffi.c, Classes.h), the
   other direction of the same ABI; what it does not know (complex numbers, 128-bit integers, on aarch64
   `long double`) keeps ffi_call. */
#include <CDelegateKitLibffi/Libffi.h>
#include <CDelegateKitTrampolines/Trampolines.h>

#include <stdlib.h>
#include <string.h>

#include "Classes.h"

/* One move: `size` bytes (1 to 8) of an argument from `offset` into call word `word` (below
   CFFI_CALL_WORDS a word of the block, from it on the stack words), zero-extended, or sign-extended where
   `sign` is set (C compilers read a narrow integer argument as extended to 32 bits at least); with `size`
   0, the argument's address (aarch64 passes a struct of more than 16 bytes as the address of a copy the
   caller made, which the argument array's value is: a call's own copy of its arguments). */
typedef struct call_move {
    uint16_t argument;
    uint16_t word;
    uint32_t offset;
    uint8_t size;
    uint8_t sign;
} call_move;

/* How the result comes back: nothing; an integer in the first integer register, widened to a whole
   ffi_arg as libffi writes it; a float or double in the first vector register; a struct's eightbytes in
   the registers `result_words` names; a struct in memory at the address the call passes; a `long double`
   on the x87 stack; (aarch64) a homogeneous floating-point aggregate's `result_members` members of
   `result_member_size` bytes, one in each vector register from the first. */
enum { result_void, result_integer, result_vector, result_registers, result_memory, result_x87, result_members };

typedef struct call_plan {
    uint32_t move_count;
    uint32_t stack_count;
    uint32_t vectors;
    uint8_t result;
    uint8_t result_size;
    uint8_t result_sign;
    uint8_t result_words[2];
    uint8_t result_members;
    uint8_t result_member_size;
    call_move moves[];
} call_plan;

/* What cffi_cif_allocate gives: libffi's cif first (its address is the interface's), then the plan of its
   calls, or NULL where they take ffi_call. */
typedef struct call_interface {
    ffi_cif cif;
    call_plan *plan;
} call_interface;

/* The most stack words a plan passes (a larger struct by value keeps ffi_call): cffi_call copies them
   on its own stack. */
enum { max_stack_words = 512 };

ffi_cif *cffi_cif_allocate(void) {
    call_interface *interface = calloc(1, sizeof *interface);
    return interface == NULL ? NULL : &interface->cif;
}

void cffi_cif_free(ffi_cif *cif) {
    if (cif == NULL) return;
    free(((call_interface *)cif)->plan);
    free(cif);
}

static int is_signed(const ffi_type *type) {
    switch (type->type) {
    case FFI_TYPE_SINT8: case FFI_TYPE_SINT16: case FFI_TYPE_SINT32: case FFI_TYPE_SINT64: case FFI_TYPE_INT:
        return 1;
    default:
        return 0;
    }
}

static void add_move(call_plan *plan, unsigned argument, unsigned word, size_t offset, size_t size, int sign) {
    plan->moves[plan->move_count++] = (call_move){
        .argument = (uint16_t)argument, .word = (uint16_t)word, .offset = (uint32_t)offset,
        .size = (uint8_t)size, .sign = (uint8_t)sign};
}

/* Moves a value of `size` bytes whole into the stack words from `*stack` on (aligned to 16 bytes where
   its type is). */
static void add_stack_moves(call_plan *plan, unsigned argument, const ffi_type *type, unsigned *stack) {
    if (type->alignment > 8) *stack += *stack % 2;
    for (size_t offset = 0; offset < type->size; offset += 8) {
        add_move(plan, argument, CFFI_CALL_WORDS + *stack, offset, type->size - offset < 8 ? type->size - offset : 8, 0);
        *stack += 1;
    }
}

/* The plan of `cif`'s calls, or NULL where ffi_call must make them. */
static call_plan *make_plan(const ffi_cif *cif) {
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__linux__)
    if (cif->abi != FFI_DEFAULT_ABI || cif->nargs > UINT16_MAX) return NULL;
    size_t capacity = 0;
    for (unsigned index = 0; index < cif->nargs; index++) capacity += (cif->arg_types[index]->size + 7) / 8 + 1;
    call_plan *plan = calloc(1, sizeof *plan + capacity * sizeof(call_move));
    if (plan == NULL) return NULL;
    unsigned integers = 0, vectors = 0, stack = 0;
    const ffi_type *result = cif->rtype;
    switch (scalar_class(result)) {
    case 1:
        plan->result = result_integer;
        plan->result_size = (uint8_t)result->size;
        plan->result_sign = (uint8_t)is_signed(result);
        break;
    case 2:
        plan->result = result_vector;
        plan->result_size = (uint8_t)result->size;
        break;
    default:
        if (result->type == FFI_TYPE_VOID) {
            plan->result = result_void;
            break;
        }
#if defined(__x86_64__)
        if (result->type == FFI_TYPE_LONGDOUBLE) {
            plan->result = result_x87;
            break;
        }
        int classes[2], eightbytes, class;
        if (result->type != FFI_TYPE_STRUCT || !classify_struct(result, classes, &eightbytes, &class)) goto unplanned;
        if (eightbytes == 0) {
            plan->result = result_memory;
            integers = 1;  /* rdi holds the result's address */
            break;
        }
        plan->result = result_registers;
        plan->result_size = (uint8_t)result->size;
        unsigned integer_words = 0, vector_words = 0;
        for (int eightbyte = 0; eightbyte < eightbytes; eightbyte++) {
            if (classes[eightbyte] == eightbyte_none) goto unplanned;
            plan->result_words[eightbyte] = (uint8_t)(classes[eightbyte] == eightbyte_integer
                ? integer_words++ : CFFI_CALL_INTEGERS + vector_words++);
        }
        break;
#else
        if (result->type != FFI_TYPE_STRUCT || !plain_struct(result)) goto unplanned;
        size_t member_size;
        unsigned members = hfa(result, &member_size);
        if (members > 0) {
            plan->result = result_members;
            plan->result_members = (uint8_t)members;
            plan->result_member_size = (uint8_t)member_size;
        } else if (result->size <= 16) {
            plan->result = result_registers;
            plan->result_size = (uint8_t)result->size;
            plan->result_words[0] = 0;
            plan->result_words[1] = 1;
        } else {
            plan->result = result_memory;  /* x8 holds its address */
        }
        break;
#endif
    }
    for (unsigned index = 0; index < cif->nargs; index++) {
        const ffi_type *type = cif->arg_types[index];
        switch (scalar_class(type)) {
        case 1:
            add_move(plan, index, integers < CFFI_CALL_INTEGERS ? integers++ : CFFI_CALL_WORDS + stack++, 0,
                     type->size, is_signed(type));
            break;
        case 2:
            add_move(plan, index, vectors < 8 ? CFFI_CALL_INTEGERS + vectors++ : CFFI_CALL_WORDS + stack++, 0,
                     type->size, 0);
            break;
        default: {
#if defined(__x86_64__)
            int classes[2], eightbytes = 0, class = 0;
            if (type->type == FFI_TYPE_LONGDOUBLE) {
                add_stack_moves(plan, index, type, &stack);
                break;
            }
            if (type->type != FFI_TYPE_STRUCT || !classify_struct(type, classes, &eightbytes, &class)) goto unplanned;
            unsigned integer_words = 0, vector_words = 0;
            for (int eightbyte = 0; eightbyte < eightbytes; eightbyte++) {
                if (classes[eightbyte] == eightbyte_none) goto unplanned;
                if (classes[eightbyte] == eightbyte_integer) integer_words++; else vector_words++;
            }
            /* In registers only where all of it fits; otherwise whole in stack words, as one in memory is. */
            if (eightbytes > 0 && integers + integer_words <= CFFI_CALL_INTEGERS && vectors + vector_words <= 8) {
                for (int eightbyte = 0; eightbyte < eightbytes; eightbyte++) {
                    size_t offset = 8 * (size_t)eightbyte;
                    unsigned word = classes[eightbyte] == eightbyte_integer ? integers++ : CFFI_CALL_INTEGERS + vectors++;
                    add_move(plan, index, word, offset, type->size - offset < 8 ? type->size - offset : 8, 0);
                }
            } else {
                add_stack_moves(plan, index, type, &stack);
            }
            break;
#else
            if (type->type != FFI_TYPE_STRUCT || !plain_struct(type)) goto unplanned;
            size_t member_size;
            unsigned members = hfa(type, &member_size);
            if (members > 0) {
                /* Each member in a vector register of its own, or all of it in stack words. */
                if (vectors + members <= 8) {
                    for (unsigned member = 0; member < members; member++) {
                        add_move(plan, index, CFFI_CALL_INTEGERS + vectors++, member * member_size, member_size, 0);
                    }
                } else {
                    vectors = 8;
                    add_stack_moves(plan, index, type, &stack);
                }
            } else if (type->size > 16) {
                add_move(plan, index, integers < CFFI_CALL_INTEGERS ? integers++ : CFFI_CALL_WORDS + stack++, 0, 0, 0);
            } else {
                /* In consecutive integer registers, from an even one where it is 16-aligned, or all of it in
                   stack words, after which no argument takes an integer register. */
                unsigned words = (unsigned)((type->size + 7) / 8);
                if (type->alignment == 16) integers += integers % 2;
                if (integers + words <= CFFI_CALL_INTEGERS) {
                    for (size_t offset = 0; offset < type->size; offset += 8) {
                        add_move(plan, index, integers++, offset, type->size - offset < 8 ? type->size - offset : 8, 0);
                    }
                } else {
                    integers = CFFI_CALL_INTEGERS;
                    add_stack_moves(plan, index, type, &stack);
                }
            }
            break;
#endif
        }
        }
    }
    if (stack > max_stack_words) goto unplanned;
    plan->stack_count = stack;
    plan->vectors = vectors;
    return plan;
unplanned:
    free(plan);
    return NULL;
#else
    (void)cif;
    return NULL;
#endif
}

/* Plans the calls of a cif libffi prepared (once: a cif is prepared once). */
static int planned(ffi_status status, ffi_cif *cif) {
    if (status == FFI_OK && cffi_register_path_available()) ((call_interface *)cif)->plan = make_plan(cif);
    return (int)status;
}

int cffi_prep_cif(ffi_cif *cif, unsigned argument_count, ffi_type *result, ffi_type **arguments) {
    return planned(ffi_prep_cif(cif, FFI_DEFAULT_ABI, argument_count, result, arguments), cif);
}

int cffi_prep_cif_var(ffi_cif *cif, unsigned fixed_count, unsigned argument_count, ffi_type *result,
                      ffi_type **arguments) {
    return planned(ffi_prep_cif_var(cif, FFI_DEFAULT_ABI, fixed_count, argument_count, result, arguments), cif);
}

/* The plan cffi_call follows for `cif` on this thread: none where the register path is suppressed here. */
static const call_plan *plan_here(const ffi_cif *cif) {
    const call_plan *plan = ((const call_interface *)cif)->plan;
    return plan != NULL && !cffi_register_path_suppressed() ? plan : NULL;
}

int cffi_cif_planned(const ffi_cif *cif) { return plan_here(cif) != NULL; }

/* `value`'s low `size` bytes, extended to 64 bits. */
static uint64_t extended(uint64_t value, unsigned size, int sign) {
    switch (size) {
    case 1: return sign ? (uint64_t)(int64_t)(int8_t)value : (uint8_t)value;
    case 2: return sign ? (uint64_t)(int64_t)(int16_t)value : (uint16_t)value;
    case 4: return sign ? (uint64_t)(int64_t)(int32_t)value : (uint32_t)value;
    default: return value;
    }
}

static void call_by_plan(const call_plan *plan, const void *function, void *result, void **arguments) {
    uint64_t block[CFFI_CALL_WORDS];
    uint64_t stack[plan->stack_count > 0 ? plan->stack_count : 1];
    for (uint32_t index = 0; index < plan->move_count; index++) {
        const call_move *move = &plan->moves[index];
        const char *source = (const char *)arguments[move->argument] + move->offset;
        uint64_t word = 0;
        if (move->size == 8) {
            memcpy(&word, source, 8);  /* a copy of known size: a load, where the size varies a call of memcpy */
        } else if (move->size == 0) {
            word = (uint64_t)(uintptr_t)source;
        } else {
            memcpy(&word, source, move->size);
            word = extended(word, move->size, move->sign);
        }
        if (move->word < CFFI_CALL_WORDS) block[move->word] = word; else stack[move->word - CFFI_CALL_WORDS] = word;
    }
#if defined(__x86_64__)
    block[CFFI_CALL_VECTOR_COUNT] = plan->vectors;
    block[CFFI_CALL_X87_RESULT] = plan->result == result_x87;
    if (plan->result == result_memory) block[0] = (uint64_t)(uintptr_t)result;
#else
    block[CFFI_CALL_INDIRECT] = (uint64_t)(uintptr_t)result;
#endif
    cffi_call_block(function, block, stack, plan->stack_count);
    switch (plan->result) {
    case result_integer: {
        uint64_t word = extended(block[0], plan->result_size, plan->result_sign);
        memcpy(result, &word, sizeof word);
        break;
    }
    case result_vector:
        memcpy(result, &block[CFFI_CALL_INTEGERS], plan->result_size);
        break;
    case result_registers:
        for (unsigned offset = 0, eightbyte = 0; offset < plan->result_size; offset += 8, eightbyte++) {
            if (plan->result_size - offset >= 8) {
                memcpy((char *)result + offset, &block[plan->result_words[eightbyte]], 8);
            } else {
                memcpy((char *)result + offset, &block[plan->result_words[eightbyte]], plan->result_size - offset);
            }
        }
        break;
    case result_members:
        for (unsigned member = 0; member < plan->result_members; member++) {
            memcpy((char *)result + member * plan->result_member_size, &block[CFFI_CALL_INTEGERS + member],
                   plan->result_member_size);
        }
        break;
#if defined(__x86_64__)
    case result_x87:
        memcpy(result, &block[CFFI_CALL_X87], sizeof(long double));
        break;
#endif
    default:
        break;
    }
}

void cffi_call(ffi_cif *cif, const void *function, void *result, void **arguments) {
    const call_plan *plan = plan_here(cif);
    if (plan != NULL) {
        call_by_plan(plan, function, result, arguments);
    } else {
        ffi_call(cif, FFI_FN(function), result, arguments);
    }
}
