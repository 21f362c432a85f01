// The example of the DocC catalog about a Python type whose methods are Swift closures. Each region between
// `// doc:begin NAME` and `// doc:end` appears verbatim in a ```swift block of the docs.
import DelegateKit
import DelegateKitCPython

/// A Python object pointer, as Python's C API takes and returns it.
public typealias PyObjectPointer = UnsafeMutablePointer<PyObject>?

/// A Python module `counters` with a type `Counter` (a method `increment()` and a property `value`), made
/// with arrays of entries while Python runs (after `Py_Initialize`), and put in `sys.modules`. Returns what
/// Python points into, to keep until Python is finalized; `increments` counts the calls of `increment()`.
public func makeCountersModule(increments: @escaping @Sendable () -> Void) throws -> Any {
    // doc:begin entry-array-python
    // A Counter is Python's object header, then the Int it counts in.
    let countSize = MemoryLayout<Int>.size, headerSize = MemoryLayout<PyObject>.size
    @Sendable func count(_ object: PyObjectPointer) -> UnsafeMutablePointer<Int> {
        (UnsafeMutableRawPointer(object!) + headerSize).assumingMemoryBound(to: Int.self)
    }
    let methods = TypedEntryArray(of: PyMethodDef.self, capacity: 1)
    try methods.append { row in
        try row.setField(\.ml_name, "increment")
        try row.setField(\.ml_flags, METH_NOARGS)
        try row.delegate.implement(\.ml_meth) { (object: PyObjectPointer, _: PyObjectPointer) in
            increments()
            count(object).pointee += 1
            return dk_py_none()                 // Py_RETURN_NONE
        }
    }
    let properties = TypedEntryArray(of: PyGetSetDef.self, capacity: 1)
    try properties.append { row in
        try row.setField(\.name, "value")
        try row.delegate.implement(\.get) { (object: PyObjectPointer, _: UnsafeMutableRawPointer?) in
            PyLong_FromLong(count(object).pointee)
        }
    }
    let slots = TypedEntryArray(of: PyType_Slot.self, capacity: 3)
    try slots.append(PyType_Slot(slot: Py_tp_methods, pfunc: UnsafeMutableRawPointer(methods.baseAddress)))
    try slots.append(PyType_Slot(slot: Py_tp_getset, pfunc: UnsafeMutableRawPointer(properties.baseAddress)))
    try slots.append(PyType_Slot(slot: Py_tp_new, pfunc: unsafeBitCast(PyType_GenericNew as newfunc, to: UnsafeMutableRawPointer.self)))
    // Python keeps pointers into the spec and the module's definition: arrays of one own them too.
    let spec = TypedEntryArray(of: PyType_Spec.self, capacity: 1)
    try spec.append(PyType_Spec(name: nil, basicsize: Int32(headerSize + countSize), itemsize: 0,
                                flags: UInt32(Py_TPFLAGS_DEFAULT), slots: slots.baseAddress)) {
        try $0.setField(\.name, "counters.Counter")
    }
    let definition = TypedEntryArray(of: PyModuleDef.self, capacity: 1)
    try definition.append(PyModuleDef(m_base: dk_py_module_def_head(), m_name: nil, m_doc: nil, m_size: -1,
                                      m_methods: nil, m_slots: nil, m_traverse: nil, m_clear: nil, m_free: nil)) {
        try $0.setField(\.m_name, "counters")
    }
    let type = PyType_FromSpec(spec.baseAddress)
    let module = PyModule_Create2(definition.baseAddress, PYTHON_API_VERSION)
    PyModule_AddObjectRef(module, "Counter", type)
    PyDict_SetItemString(PyImport_GetModuleDict(), "counters", module)
    // doc:end
    guard type != nil, module != nil else { throw PythonError() }
    Py_DECREF(type)
    Py_DECREF(module)
    return (methods, properties, slots, spec, definition)
}

/// Python could not make the type or the module (its error is set).
public struct PythonError: Error {}
