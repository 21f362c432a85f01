/* How the ABI passes a value of a libffi type: what both the array entry (Libffi.c) and a call by plan
   (CallPlan.c) decide once per signature. Internal to CDelegateKitLibffi. */
#ifndef CDELEGATEKIT_LIBFFI_CLASSES_H
#define CDELEGATEKIT_LIBFFI_CLASSES_H

#include <CDelegateKitLibffi/Libffi.h>
#include <stddef.h>

/* How a value of `type` travels when it is a scalar of at most 8 bytes: 1 in an integer register, 2 in a
   vector register (either, once those run out, in one 8-byte stack word); else 0. */
static inline int scalar_class(const ffi_type *type) {
    switch (type->type) {
    case FFI_TYPE_UINT8: case FFI_TYPE_SINT8: case FFI_TYPE_UINT16: case FFI_TYPE_SINT16:
    case FFI_TYPE_UINT32: case FFI_TYPE_SINT32: case FFI_TYPE_UINT64: case FFI_TYPE_SINT64:
    case FFI_TYPE_INT: case FFI_TYPE_POINTER:
        return 1;
    case FFI_TYPE_FLOAT: case FFI_TYPE_DOUBLE:
        return 2;
    default:
        return 0;
    }
}

#if defined(__x86_64__) && defined(__linux__)
/* The System V classes of a struct's eightbytes, as the array entry needs them: 0 none yet, 1 INTEGER,
   2 SSE; `memory` set where the struct travels in memory (a `long double` in it). Marks each eightbyte a
   scalar at `offset` overlaps. 0 where a member is of a kind this does not know. */
enum { eightbyte_none = 0, eightbyte_integer = 1, eightbyte_sse = 2 };
static inline int classify_members(const ffi_type *type, size_t offset, int classes[2], int *memory) {
    if (type->type == FFI_TYPE_STRUCT) {
        for (ffi_type **element = type->elements; *element != NULL; element++) {
            offset = (offset + (*element)->alignment - 1) / (*element)->alignment * (*element)->alignment;
            if (!classify_members(*element, offset, classes, memory)) return 0;
            offset += (*element)->size;
        }
        return 1;
    }
    if (type->type == FFI_TYPE_LONGDOUBLE) {
        *memory = 1;
        return 1;
    }
    int class = scalar_class(type);
    if (class == 0) return 0;
    for (size_t byte = offset; byte < offset + type->size && byte < 16; byte += 8) {
        /* INTEGER wins over SSE within an eightbyte. */
        int *eightbyte = &classes[byte / 8];
        if (*eightbyte != eightbyte_integer) *eightbyte = class == 1 ? eightbyte_integer : eightbyte_sse;
    }
    return 1;
}

/* How a struct travels: in memory (returns 1, *eightbytes 0), or in `*eightbytes` registers all of
   `*class` (1), or in two of different classes (`classes` says which; returns 1, *class 0); 0 where this
   cannot tell. */
static inline int classify_struct(const ffi_type *type, int classes[2], int *eightbytes, int *class) {
    int memory = 0;
    classes[0] = classes[1] = eightbyte_none;
    *eightbytes = 0;
    *class = 0;
    if (type->size > 16) return 1;
    if (!classify_members(type, 0, classes, &memory)) return 0;
    if (memory) return 1;
    *eightbytes = type->size > 8 ? 2 : 1;
    if (*eightbytes == 1 || classes[0] == classes[1]) *class = classes[0];
    return 1;
}
#endif


#if defined(__aarch64__) && defined(__linux__)
/* AAPCS64: counts in `*count` the members of a struct that are all `float` or all `double` (`*kind` the
   first one's libffi type); 0 where another kind of member is in it, which a `long double` (a quad in a
   whole vector register) and a complex number are. */
static inline int hfa_members(const ffi_type *type, unsigned short *kind, unsigned *count) {
    if (type->type == FFI_TYPE_STRUCT) {
        for (ffi_type **element = type->elements; *element != NULL; element++) {
            if (!hfa_members(*element, kind, count)) return 0;
        }
        return 1;
    }
    if (type->type != FFI_TYPE_FLOAT && type->type != FFI_TYPE_DOUBLE) return 0;
    if (*kind == 0) *kind = type->type;
    *count += 1;
    return *kind == type->type;
}

/* Whether a struct holds only integers, pointers, floats, doubles and structs of them: what a call by
   plan passes on aarch64. */
static inline int plain_struct(const ffi_type *type) {
    if (type->type != FFI_TYPE_STRUCT) return scalar_class(type) != 0;
    for (ffi_type **element = type->elements; *element != NULL; element++) {
        if (!plain_struct(*element)) return 0;
    }
    return 1;
}

/* A homogeneous floating-point aggregate's number of members (1 to 4), each of `*member_size` bytes, in
   as many consecutive vector registers; 0 for any other struct. */
static inline unsigned hfa(const ffi_type *type, size_t *member_size) {
    unsigned short kind = 0;
    unsigned count = 0;
    if (type->type != FFI_TYPE_STRUCT || !hfa_members(type, &kind, &count) || count == 0 || count > 4) return 0;
    *member_size = kind == FFI_TYPE_FLOAT ? 4 : 8;
    return count;
}
#endif

#endif
