#ifndef DELEGATEKIT_ARITIES_H
#define DELEGATEKIT_ARITIES_H

/* Callbacks of more parameters than DelegateKit's fixed-arity overloads take (seven and up), called as C
   calls them; each returns what C received, widened by C. */

#include <stdint.h>

/* The arguments each caller below passes, for the Swift closures to check. */
#define FX_ARITY_I8 ((int8_t)-3)
#define FX_ARITY_I16 ((int16_t)-300)
#define FX_ARITY_I32 ((int32_t)-70000)
#define FX_ARITY_I64 ((int64_t)-5000000000LL)
#define FX_ARITY_F 1.5f
#define FX_ARITY_D (-2.25)
#define FX_ARITY_U8 ((uint8_t)200)
#define FX_ARITY_U16 ((uint16_t)60000)
#define FX_ARITY_P ((void *)0x40)

/* Calls `int8_t f(int8_t, int16_t, int32_t, int64_t, float, double, uint8_t, uint16_t, void *)` with the
   values above. */
int64_t fx_call_narrow9(const void *f);

/* Calls `bool f(int32_t × 7)` with 1 … 7. */
uint64_t fx_call_bool7(const void *f);

/* Calls `void f(int64_t *out, double × 7)` with out and 0.5, 1.5, … 6.5. */
void fx_call_void8(const void *f, int64_t *out);

/* Calls `int16_t f(double × 7, float)` (every argument in a vector register) with 1 … 7 and 8.5f. */
int64_t fx_call_floating8(const void *f);

/* Calls `int64_t f(int64_t × 12)` with 1 … 12. */
int64_t fx_call_i64x12(const void *f);

#endif
