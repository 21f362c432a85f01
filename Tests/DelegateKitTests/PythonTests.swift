@testable import DelegateKit  // RegisterPath.withLibffiEntry: both call paths in one process
@preconcurrency import DelegateKitCPython  // Python's exception classes are C globals (`PyExc_TypeError`)
import DelegateKitDocumentationExamples
import Glibc
import Testing

/// Python's C API with the interpreter embedded: a module `dk_test` whose functions, and a type
/// `dk_test.Counter` whose methods and property, are Swift closures, called from Python code. Each test
/// runs in a child process (an exit test, `inPython`) that initializes Python once, builds the module on
/// each call path and runs the same Python code against it, then finalizes Python.
///
/// The module is built twice: by hand, each function a `CClosure` kept alive beside the `PyMethodDef`,
/// `PyGetSetDef` and `PyType_Slot` arrays (terminated by a zeroed row) and the C strings they point to,
/// the baseline the documentation compares against; and with `TypedEntryArray`s, which own all of that.
/// What the functions do is shared (`answer`, `add`, ...): the two versions differ only in the building.
@Suite struct PythonTests {
    @Test func aModuleAndATypeBuiltByHandInAChildProcess() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inPython(PythonTests.builtByHand)
        })
    }

    /// What Python does with the module; an `assert` that fails, or an exception, ends the code with a
    /// traceback.
    static let script = """
        import dk_test
        assert dk_test.answer() == 42
        assert dk_test.add(2, 3) == 5
        assert dk_test.scale(4) == 8 and dk_test.scale(4, factor=3) == 12
        for bad in (lambda: dk_test.add(1, "x"), lambda: dk_test.add(1)):
            try:
                bad()
            except TypeError:
                pass
            else:
                raise AssertionError("add() took bad arguments")
        c = dk_test.Counter()
        assert (type(c).__name__, type(c).__module__) == ("Counter", "dk_test")
        assert c.value == 0
        assert c.increment() is None
        c.increment()
        assert c.add(5) == 7
        c.value = 40
        c.increment()
        assert c.value == 41
        try:
            del c.value
        except TypeError:
            pass
        else:
            raise AssertionError("value was deleted")
        d = dk_test.Counter()
        d.add(1)
        assert (c.value, d.value) == (41, 1)
        """

    /// The calls `script` makes into Swift, in order.
    static let expectedCalls = [
        "answer", "add", "scale", "scale", "add", "add", "get", "increment", "increment", "Counter.add", "set",
        "increment", "get", "set", "Counter.add", "get", "get",
    ]

    /// Runs `script` against the module `build` makes, and checks the closures saw its calls; returns what
    /// Python's module and type point to, for `inPython` to keep until Python is finalized.
    static func runScript(_ build: (LogBox) throws -> Any) throws -> Any {
        let log = LogBox()
        let kept = try build(log)
        check(PyRun_SimpleStringFlags(script, nil) == 0, "the Python code failed (its traceback is above)")
        check(log.messages == expectedCalls, "the closures saw \(log.messages)")
        return kept
    }

    @Test func aModuleAndATypeBuiltWithEntryArraysInAChildProcess() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inPython(PythonTests.builtWithEntryArrays)
        })
    }

    /// The documentation's `counters.Counter`, made with arrays of entries.
    @Test func theDocumentationsCounterTypeInAChildProcess() async {
        expectFinished(await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            inPython { _ in
                let log = LogBox()
                let kept = try makeCountersModule { log.append("increment") }
                let script = """
                    import counters
                    c = counters.Counter()
                    c.increment(); c.increment()
                    assert c.value == 2 and counters.Counter().value == 0
                    """
                check(PyRun_SimpleStringFlags(script, nil) == 0, "the Python code failed (its traceback is above)")
                check(log.messages == ["increment", "increment"], "the closures saw \(log.messages)")
                return kept
            }
        })
    }

    static func builtByHand(libffi: Bool) throws -> Any {
        try runScript(makeModuleByHand)
    }

    static func builtWithEntryArrays(libffi: Bool) throws -> Any {
        try runScript(makeModuleWithEntryArrays)
    }

    // MARK: By hand, with today's API

    /// What a module built by hand must keep alive while Python may use it: each C string, each array of
    /// entries and every closure the entries point to.
    final class KeptByHand {
        private var closures: [CClosure] = []
        private var memory: [UnsafeMutableRawPointer] = []
        deinit { memory.forEach { free($0) } }

        func string(_ text: String) -> UnsafePointer<CChar> {
            let copy = strdup(text)!
            memory.append(copy)
            return UnsafePointer(copy)
        }

        /// `rows` and a zeroed row after them, where they never move.
        func array<Row>(_ rows: [Row]) -> UnsafeMutablePointer<Row> {
            let array = calloc(rows.count + 1, MemoryLayout<Row>.stride)!.bindMemory(to: Row.self, capacity: rows.count + 1)
            memory.append(array)
            array.initialize(from: rows, count: rows.count)
            return array
        }

        func keep(_ closure: CClosure) -> CClosure {
            closures.append(closure)
            return closure
        }
    }

    /// The module `dk_test` with its type `Counter`, in `sys.modules`.
    static func makeModuleByHand(_ log: LogBox) throws -> Any {
        let kept = KeptByHand()
        let counterMethods = kept.array([
            PyMethodDef(
                ml_name: kept.string("increment"),
                ml_meth: try kept.keep(CClosure { (object: PyObjectPointer, _: PyObjectPointer) in increment(log, object) })
                    .functionPointer(as: PyCFunction.self),
                ml_flags: METH_NOARGS, ml_doc: nil),
            PyMethodDef(
                ml_name: kept.string("add"),
                ml_meth: try kept.keep(CClosure { (object: PyObjectPointer, n: PyObjectPointer) in addToCount(log, object, n) })
                    .functionPointer(as: PyCFunction.self),
                ml_flags: METH_O, ml_doc: nil),
        ])
        let counterProperties = kept.array([
            PyGetSetDef(
                name: kept.string("value"),
                get: try kept.keep(CClosure { (object: PyObjectPointer, _: UnsafeMutableRawPointer?) in value(log, object) })
                    .functionPointer(as: getter.self),
                set: try kept.keep(CClosure { (object: PyObjectPointer, value: PyObjectPointer, _: UnsafeMutableRawPointer?) in
                    setValue(log, object, value)
                }).functionPointer(as: setter.self),
                doc: nil, closure: nil),
        ])
        let counterSlots = kept.array([
            PyType_Slot(slot: Py_tp_methods, pfunc: UnsafeMutableRawPointer(counterMethods)),
            PyType_Slot(slot: Py_tp_getset, pfunc: UnsafeMutableRawPointer(counterProperties)),
            PyType_Slot(slot: Py_tp_new, pfunc: unsafeBitCast(PyType_GenericNew as newfunc, to: UnsafeMutableRawPointer.self)),
        ])
        // The name outlives the type: 3.11's `tp_name` points into it.
        var counterSpec = PyType_Spec(
            name: kept.string("dk_test.Counter"), basicsize: Int32(counterSize), itemsize: 0, flags: UInt32(Py_TPFLAGS_DEFAULT),
            slots: counterSlots)
        let counterType = PyType_FromSpec(&counterSpec)
        check(counterType != nil, "PyType_FromSpec failed")

        let functions = kept.array([
            PyMethodDef(
                ml_name: kept.string("answer"),
                ml_meth: try kept.keep(CClosure { (_: PyObjectPointer, _: PyObjectPointer) in answer(log) }).functionPointer(as: PyCFunction.self),
                ml_flags: METH_NOARGS, ml_doc: nil),
            PyMethodDef(
                ml_name: kept.string("add"),
                ml_meth: try kept.keep(CClosure { (_: PyObjectPointer, arguments: PyObjectPointer) in add(log, arguments) })
                    .functionPointer(as: PyCFunction.self),
                ml_flags: METH_VARARGS, ml_doc: nil),
            // METH_KEYWORDS: a function of three arguments in `ml_meth`, whose type has two (C casts it);
            // `erasedAs` is the cast.
            PyMethodDef(
                ml_name: kept.string("scale"),
                ml_meth: try kept.keep(CClosure { (_: PyObjectPointer, arguments: PyObjectPointer, keywords: PyObjectPointer) in
                    scale(log, arguments, keywords)
                }).functionPointer(erasedAs: PyCFunction.self),
                ml_flags: METH_VARARGS | METH_KEYWORDS, ml_doc: nil),
        ])
        // In the kept memory too: the module keeps a pointer to its definition.
        let definition = kept.array([
            PyModuleDef(
                m_base: dk_py_module_def_head(), m_name: kept.string("dk_test"), m_doc: nil, m_size: -1, m_methods: functions,
                m_slots: nil, m_traverse: nil, m_clear: nil, m_free: nil),
        ])
        let module = PyModule_Create2(definition, PYTHON_API_VERSION)
        check(module != nil && PyModule_AddObjectRef(module, "Counter", counterType) == 0, "the module was not made")
        check(PyDict_SetItemString(PyImport_GetModuleDict(), "dk_test", module) == 0, "sys.modules refused the module")
        Py_DECREF(counterType)
        Py_DECREF(module)
        return kept
    }

    // MARK: With arrays of entries

    /// The same module as `makeModuleByHand`'s, each array a `TypedEntryArray` that owns its rows' closures
    /// and strings (the type's spec and the module's definition too, as arrays of one: Python keeps
    /// pointers into both).
    static func makeModuleWithEntryArrays(_ log: LogBox) throws -> Any {
        let counterMethods = TypedEntryArray(of: PyMethodDef.self, capacity: 2)
        try counterMethods.append { row in
            try row.setField(\.ml_name, "increment")
            try row.setField(\.ml_flags, METH_NOARGS)
            try row.delegate.implement(\.ml_meth) { (object: PyObjectPointer, _: PyObjectPointer) in increment(log, object) }
        }
        try counterMethods.append { row in
            try row.setField(\.ml_name, "add")
            try row.setField(\.ml_flags, METH_O)
            try row.delegate.implement(\.ml_meth) { (object: PyObjectPointer, n: PyObjectPointer) in addToCount(log, object, n) }
        }
        let counterProperties = TypedEntryArray(of: PyGetSetDef.self, capacity: 1)
        try counterProperties.append { row in
            try row.setField(\.name, "value")
            try row.delegate.implement(\.get) { (object: PyObjectPointer, _: UnsafeMutableRawPointer?) in value(log, object) }
            try row.delegate.implement(\.set) { (object: PyObjectPointer, value: PyObjectPointer, _: UnsafeMutableRawPointer?) in
                setValue(log, object, value)
            }
        }
        let counterSlots = TypedEntryArray(of: PyType_Slot.self, capacity: 3)
        try counterSlots.append(PyType_Slot(slot: Py_tp_methods, pfunc: UnsafeMutableRawPointer(counterMethods.baseAddress)))
        try counterSlots.append(PyType_Slot(slot: Py_tp_getset, pfunc: UnsafeMutableRawPointer(counterProperties.baseAddress)))
        try counterSlots.append(PyType_Slot(slot: Py_tp_new, pfunc: unsafeBitCast(PyType_GenericNew as newfunc, to: UnsafeMutableRawPointer.self)))
        // The spec (and below, the module's definition) as an array of one: Python keeps pointers into both.
        let counterSpec = TypedEntryArray(of: PyType_Spec.self, capacity: 1)
        try counterSpec.append(PyType_Spec(name: nil, basicsize: Int32(counterSize), itemsize: 0, flags: UInt32(Py_TPFLAGS_DEFAULT), slots: counterSlots.baseAddress)) {
            try $0.setField(\.name, "dk_test.Counter")
        }
        let counterType = PyType_FromSpec(counterSpec.baseAddress)
        check(counterType != nil, "PyType_FromSpec failed")

        let functions = TypedEntryArray(of: PyMethodDef.self, capacity: 3)
        try functions.append { row in
            try row.setField(\.ml_name, "answer")
            try row.setField(\.ml_flags, METH_NOARGS)
            try row.delegate.implement(\.ml_meth) { (_: PyObjectPointer, _: PyObjectPointer) in answer(log) }
        }
        try functions.append { row in
            try row.setField(\.ml_name, "add")
            try row.setField(\.ml_flags, METH_VARARGS)
            try row.delegate.implement(\.ml_meth) { (_: PyObjectPointer, arguments: PyObjectPointer) in add(log, arguments) }
        }
        try functions.append { row in
            try row.setField(\.ml_name, "scale")
            // METH_KEYWORDS: a function of three arguments in `ml_meth`, whose type has two (C casts it).
            try row.setField(\.ml_flags, METH_VARARGS | METH_KEYWORDS)
            try row.setField(\.ml_meth, holding: CClosure { (_: PyObjectPointer, arguments: PyObjectPointer, keywords: PyObjectPointer) in
                scale(log, arguments, keywords)
            })
        }
        let definition = TypedEntryArray(of: PyModuleDef.self, capacity: 1)
        try definition.append(PyModuleDef(
            m_base: dk_py_module_def_head(), m_name: nil, m_doc: nil, m_size: -1, m_methods: functions.baseAddress,
            m_slots: nil, m_traverse: nil, m_clear: nil, m_free: nil)) { try $0.setField(\.m_name, "dk_test") }
        let module = PyModule_Create2(definition.baseAddress, PYTHON_API_VERSION)
        check(module != nil && PyModule_AddObjectRef(module, "Counter", counterType) == 0, "the module was not made")
        check(PyDict_SetItemString(PyImport_GetModuleDict(), "dk_test", module) == 0, "sys.modules refused the module")
        Py_DECREF(counterType)
        Py_DECREF(module)
        return (counterMethods, counterProperties, counterSlots, counterSpec, functions, definition)
    }

    // MARK: What the functions and the type do (every version)

    typealias PyObjectPointer = UnsafeMutablePointer<PyObject>?

    /// An int argument, or nil with Python's error set.
    static func integer(_ object: PyObjectPointer) -> Int? {
        let value = PyLong_AsLong(object)
        return value == -1 && PyErr_Occurred() != nil ? nil : value
    }

    static func typeError(_ message: String) -> PyObjectPointer {
        PyErr_SetString(PyExc_TypeError, message)
        return nil
    }

    /// `dk_test.answer()`, METH_NOARGS.
    static func answer(_ log: LogBox) -> PyObjectPointer {
        log.append("answer")
        return PyLong_FromLong(42)
    }

    /// `dk_test.add(a, b)`, METH_VARARGS: the sum of two ints. (`PyArg_ParseTuple` is a C-variadic function,
    /// which Swift cannot call: the tuple is read item by item.)
    static func add(_ log: LogBox, _ arguments: PyObjectPointer) -> PyObjectPointer {
        log.append("add")
        guard PyTuple_Size(arguments) == 2 else { return typeError("add() takes two ints") }
        guard let a = integer(PyTuple_GetItem(arguments, 0)), let b = integer(PyTuple_GetItem(arguments, 1)) else { return nil }
        return PyLong_FromLong(a + b)
    }

    /// `dk_test.scale(x, factor=2)`, METH_VARARGS | METH_KEYWORDS (`keywords` is NULL when the call names
    /// none).
    static func scale(_ log: LogBox, _ arguments: PyObjectPointer, _ keywords: PyObjectPointer) -> PyObjectPointer {
        log.append("scale")
        guard PyTuple_Size(arguments) == 1, let x = integer(PyTuple_GetItem(arguments, 0)) else { return typeError("scale() takes an int") }
        var factor = 2
        if let keywords, let given = PyDict_GetItemString(keywords, "factor") {
            guard let value = integer(given) else { return nil }
            factor = value
        }
        return PyLong_FromLong(x * factor)
    }

    /// A `Counter`'s size: its object header and the `Int` it counts in.
    static let counterSize = MemoryLayout<PyObject>.size + MemoryLayout<Int>.size

    /// The `Int` a `Counter` counts in, after its header (zeroed by `PyType_GenericAlloc`).
    static func count(_ object: PyObjectPointer) -> UnsafeMutablePointer<Int> {
        (UnsafeMutableRawPointer(object!) + MemoryLayout<PyObject>.size).assumingMemoryBound(to: Int.self)
    }

    /// `Counter.increment()`, METH_NOARGS: returns None.
    static func increment(_ log: LogBox, _ object: PyObjectPointer) -> PyObjectPointer {
        log.append("increment")
        count(object).pointee += 1
        return dk_py_none()
    }

    /// `Counter.add(n)`, METH_O: the new count.
    static func addToCount(_ log: LogBox, _ object: PyObjectPointer, _ n: PyObjectPointer) -> PyObjectPointer {
        log.append("Counter.add")
        guard let n = integer(n) else { return nil }
        count(object).pointee += n
        return PyLong_FromLong(count(object).pointee)
    }

    /// `Counter.value`'s getter.
    static func value(_ log: LogBox, _ object: PyObjectPointer) -> PyObjectPointer {
        log.append("get")
        return PyLong_FromLong(count(object).pointee)
    }

    /// `Counter.value`'s setter: `value` is NULL for `del`, which it refuses.
    static func setValue(_ log: LogBox, _ object: PyObjectPointer, _ value: PyObjectPointer) -> Int32 {
        log.append("set")
        guard let value else {
            _ = typeError("value cannot be deleted")
            return -1
        }
        guard let n = integer(value) else { return -1 }
        count(object).pointee = n
        return 0
    }
}

/// A Python test's child process: its watchdog, Python initialized once, `scenario` on the register path
/// and on libffi's, Python finalized. What each scenario returns (the entries and closures its module and
/// type point to) is released only after that, since Python may hold the module and the type until it
/// finalizes. Exits normally, unlike `inChild` (whose scenarios jump over frames), so that LeakSanitizer's
/// check at exit runs in the AddressSanitizer run. A failed check prints why and ends the child (`fail`).
func inPython(_ scenario: (_ libffi: Bool) throws -> Any) -> Never {
    startWatchdog()
    dup2(1, 2)  // Python's tracebacks, and the sanitizers' reports, in the output the parent shows
    Py_InitializeEx(0)  // 0: Python installs no signal handler (SIGINT) in the test process
    var kept: [Any] = []
    do {
        kept.append(try scenario(false))
        kept.append(try RegisterPath.withLibffiEntry { try scenario(true) })
    } catch {
        fail("threw \(error)")
    }
    check(Py_FinalizeEx() == 0, "Py_FinalizeEx failed")
    kept.removeAll()
    finishCheckingLeaks()
}

/// Ends a child that exits normally: LeakSanitizer's check (`checkLeaks`), then "done" for the parent
/// (`expectFinished`).
func finishCheckingLeaks() -> Never {
    checkLeaks()
    print("done")
    fflush(nil)
    exit(0)
}

/// LeakSanitizer's check now, in the AddressSanitizer run (which alone has it): its report lands in the
/// output the parent shows, where a leak found at exit would only change the exit code (and an exit test
/// that fails hands back no output).
func checkLeaks() {
    guard let entry = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__lsan_do_recoverable_leak_check") else { return }
    if unsafeBitCast(entry, to: (@convention(c) () -> Int32).self)() != 0 { fail("LeakSanitizer found leaks (reported above)") }
}
