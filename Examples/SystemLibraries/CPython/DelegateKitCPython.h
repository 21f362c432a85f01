// CPython's C API for embedding the interpreter (the tests' PythonTests).
//
// Not Python.h first, as CPython asks of C files: its pyconfig.h defines _GNU_SOURCE, which would make the
// C library's headers, parsed again inside this module, declare their structs otherwise than Swift's Glibc
// module does (`fd_set.fds_bits`, not `__fds_bits`), and Swift refuses the two definitions ("is not present
// in definition of 'fd_set' in module 'SwiftGlibc'"). <features.h> first fixes the C library's feature set
// as Glibc's; the rest only changes which extra functions the C library declares, not a layout Python's
// structs use (on the 64-bit Linux the package supports).
#include <features.h>
// The only form 3.13 and later accept for the `#` formats of argument parsing (none is used here).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

// Two macros of Python.h that Swift cannot import, as functions with the same meaning in every version
// (3.11 to 3.14; since 3.12 both objects are immortal, which the macros take care of).

// `Py_RETURN_NONE`: a new reference to None. (`Py_None` is `&_Py_NoneStruct`, an address of a global,
// which Swift imports no macro for.)
static inline PyObject *dk_py_none(void) {
    return Py_NewRef(Py_None);
}

// `PyModuleDef_HEAD_INIT`: what a `PyModuleDef`'s `m_base` starts as (an initializer list, not a value
// Swift can import; zeroes would leave the definition's reference count 0).
static inline PyModuleDef_Base dk_py_module_def_head(void) {
    PyModuleDef_Base head = PyModuleDef_HEAD_INIT;
    return head;
}
