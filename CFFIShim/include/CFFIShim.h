#ifndef CFFISHIM_H
#define CFFISHIM_H

#include <ffi.h>

/* libffi's type descriptors are mutable C globals, which Swift 6 refuses to take the address of;
   these return the addresses instead. */
ffi_type *cffi_type_void(void);
ffi_type *cffi_type_uint8(void);
ffi_type *cffi_type_sint8(void);
ffi_type *cffi_type_uint16(void);
ffi_type *cffi_type_sint16(void);
ffi_type *cffi_type_uint32(void);
ffi_type *cffi_type_sint32(void);
ffi_type *cffi_type_uint64(void);
ffi_type *cffi_type_sint64(void);
ffi_type *cffi_type_float(void);
ffi_type *cffi_type_double(void);
ffi_type *cffi_type_longdouble(void);
ffi_type *cffi_type_pointer(void);

/* The code libffi reaches for every call of a closure. */
typedef void (*cffi_closure_handler)(ffi_cif *cif, void *result, void **arguments, void *user_data);

/* ffi_prep_cif with the platform's default ABI; returns an ffi_status (FFI_OK is 0). */
int cffi_prep_cif(ffi_cif *cif, unsigned argument_count, ffi_type *result, ffi_type **arguments);

/* Allocates and prepares a closure. Returns the closure (to free later) and stores its callable code in
   *code, or returns NULL (nothing allocated) when the system refuses executable memory or prep fails. */
void *cffi_closure_create(ffi_cif *cif, cffi_closure_handler handler, void *user_data, void **code);
void cffi_closure_free(void *closure);
/* Sets the user data a prepared closure passes to its handler (before C can call it). */
void cffi_closure_set_user_data(void *closure, void *user_data);

/* Calls `function` as described by `cif`. Integer results narrower than a register are written as a
   full ffi_arg, as libffi requires. */
void cffi_call(ffi_cif *cif, const void *function, void *result, void **arguments);

/* A function-pointer slot in a table C reads while Swift replaces it: the store must never tear. */
void cffi_store_pointer(void **slot, const void *value);
const void *cffi_load_pointer(void *const *slot);

#endif
