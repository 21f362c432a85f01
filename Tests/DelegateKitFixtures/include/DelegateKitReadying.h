#ifndef DELEGATEKIT_READYING_H
#define DELEGATEKIT_READYING_H

/* A C library that writes into a table it is handed, as CPython's PyType_Ready does with a PyTypeObject:
   it sets data members and fills every NULL function-pointer member with its own (inherited) function,
   leaving every member already set alone. For checking what DelegateKit's tables allow C to write. */

#include <stdint.h>

enum { FX_TYPE_READY = 1 << 12, FX_TYPE_BASE_SIZE = 48 };

typedef struct fx_type {
    uint64_t flags;                             /* readying sets FX_TYPE_READY */
    int64_t basicsize;                          /* readying sets FX_TYPE_BASE_SIZE when 0 */
    int64_t (*hash)(void *object);
    int32_t (*setup)(void *object, int64_t argument);
    double (*weight)(void *object);
    void (*finalize)(void *object);
} fx_type;

/* Readies `type`: sets its data members as above and fills each NULL method with the base type's.
   Returns how many methods it filled. */
int fx_type_ready(fx_type *type);

/* The base type's method that readying puts in slot `member` (0 hash, 1 setup, 2 weight, 3 finalize). */
const void *fx_type_base_method(int member);
/* Writes the base type's method into slot `member` whatever it holds, as readying never does. */
void fx_type_inherit(fx_type *type, int member);
/* The base type's methods return FX_TYPE_BASE_HASH, FX_TYPE_BASE_SETUP and FX_TYPE_BASE_WEIGHT; its
   finalize counts its calls, which fx_type_base_finalized returns. */
enum { FX_TYPE_BASE_HASH = 0x5EED, FX_TYPE_BASE_SETUP = -70 };
#define FX_TYPE_BASE_WEIGHT 0.25
int fx_type_base_finalized(void);

/* Calls through the table as the library does, loading the slot first. A NULL slot is not called: the
   call returns INT64_MIN, INT32_MIN, -1, or 0 (finalize; 1 when it called). */
int64_t fx_type_call_hash(const fx_type *type, void *object);
int32_t fx_type_call_setup(const fx_type *type, void *object, int64_t argument);
double fx_type_call_weight(const fx_type *type, void *object);
int fx_type_call_finalize(const fx_type *type, void *object);

#endif
