/* A variadic closure's arguments after its fixed ones; see CDelegateKitLibffi/Libffi.h. */
#include <CDelegateKitLibffi/Libffi.h>

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

/* vector_bytes: how much of a vector register a variadic argument fills. x86_64 passes a long double on the
   stack, so a double in the low half is the most; AAPCS64 passes a long double (a quad) in all of q0…q7. */
#if defined(__x86_64__)
enum { integer_registers = 6, vector_registers = 8, vector_bytes = 8 };  /* rdi…r9, xmm0…xmm7 */
#elif defined(__aarch64__)
enum { integer_registers = 8, vector_registers = 8, vector_bytes = 16 };  /* x0…x7, v0…v7 (AAPCS64 as Linux has it) */
#else
#error "DelegateKit's variadic closures know the calling conventions of x86_64 and aarch64 Linux"
#endif

typedef struct frame {
    /* The registers as a variadic callee's prologue saves them: on x86_64 this is va_list's register save
       area (the integer registers at 0, the vector registers at 48, 16 bytes each); aarch64's va_list
       points past the end of each array. */
    uint64_t integers[integer_registers];
    unsigned char vectors[vector_registers][16];
    void *stack;  /* the first argument passed on the stack */
    unsigned integers_used, vectors_used;
    va_list reader;
} frame;

unsigned cffi_va_integer_registers(void) { return integer_registers; }
unsigned cffi_va_vector_registers(void) { return vector_registers; }
unsigned cffi_va_vector_bytes(void) { return vector_bytes; }
size_t cffi_va_frame_size(void) { return sizeof(frame); }
size_t cffi_va_list_size(void) { return sizeof(va_list); }

void cffi_va_frame_fill(void *memory, void *const *pads, unsigned integers_used, unsigned vectors_used) {
    frame *f = memory;
    unsigned pad = 0;
    for (unsigned i = integers_used; i < integer_registers; i++) memcpy(&f->integers[i], pads[pad++], 8);
    /* As much of each vector register as the padding argument held: va_arg reads a double (floats come
       promoted) from the low half, and on aarch64 a long double from the whole register. */
    for (unsigned i = vectors_used; i < vector_registers; i++) memcpy(f->vectors[i], pads[pad++], vector_bytes);
    f->stack = pads[pad];
    f->integers_used = integers_used;
    f->vectors_used = vectors_used;
    cffi_va_frame_start(f, &f->reader);
}

void cffi_va_frame_start(const void *memory, void *list) {
    const frame *f = memory;
#if defined(__x86_64__)
    struct {
        unsigned gp_offset, fp_offset;
        void *overflow_arg_area, *reg_save_area;
    } tag = {8 * f->integers_used, 8 * integer_registers + 16 * f->vectors_used, f->stack, (void *)f->integers};
#else
    struct {
        void *stack, *gr_top, *vr_top;
        int gr_offs, vr_offs;
    } tag = {f->stack, (void *)(f->integers + integer_registers), (void *)(f->vectors + vector_registers),
             -8 * (int)(integer_registers - f->integers_used), -16 * (int)(vector_registers - f->vectors_used)};
#endif
    _Static_assert(sizeof tag == sizeof(va_list), "va_list is not laid out as this ABI says");
    memcpy(list, &tag, sizeof tag);
}

int cffi_va_next_int(void *memory) { return va_arg(((frame *)memory)->reader, int); }
long long cffi_va_next_long_long(void *memory) { return va_arg(((frame *)memory)->reader, long long); }
double cffi_va_next_double(void *memory) { return va_arg(((frame *)memory)->reader, double); }
void *cffi_va_next_pointer(void *memory) { return va_arg(((frame *)memory)->reader, void *); }
#if defined(__x86_64__)
long double cffi_va_next_long_double(void *memory) { return va_arg(((frame *)memory)->reader, long double); }
#endif
