"""Python's callback peers through DelegateKit's benchmark loop: prints ns per call as JSON.

usage: peers.py LIBRARY CALLS            times both peers (median of 5 runs each) and prints JSON
       peers.py LIBRARY CALLS PEER       runs PEER's int64 loop once, untimed (for callgrind)
LIBRARY is Benchmarks/BenchmarkSupport/loops.c built as a shared library. A peer that cannot run reports
why instead of numbers.
"""
import ctypes
import json
import statistics
import sys
import time


def median_ns(loop, function, calls):
    loop(function, calls // 10)  # warm up
    samples = []
    for _ in range(5):
        start = time.perf_counter_ns()
        loop(function, calls)
        samples.append((time.perf_counter_ns() - start) / calls)
    return statistics.median(samples)


def call_loop(function, calls):
    """Calls function(acc, 1) `calls` times, each result fed into the next call."""
    accumulator = 0
    for _ in range(calls):
        accumulator = function(accumulator, 1)
    return accumulator


def import_or_install(name):
    """The module, installed with pip first when it is missing; None when that fails."""
    import importlib
    import subprocess
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        importlib.invalidate_caches()
        return importlib.import_module(name)
    except Exception:
        return None


def main():
    path, calls = sys.argv[1], int(sys.argv[2])
    only = sys.argv[3] if len(sys.argv) > 3 else None
    results = {}

    library = ctypes.CDLL(path)
    library.bench_loop_i64.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    library.bench_loop_i64.restype = ctypes.c_int64
    library.bench_loop_f64.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    library.bench_loop_f64.restype = ctypes.c_double
    add_i64 = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(lambda a, b: a + b)
    add_f64 = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(lambda a, b: a + b)
    if only == "ctypes":
        library.bench_loop_i64(ctypes.cast(add_i64, ctypes.c_void_p), calls)
        return
    results["ctypes"] = {
        "i64": median_ns(library.bench_loop_i64, ctypes.cast(add_i64, ctypes.c_void_p), calls),
        "f64": median_ns(library.bench_loop_f64, ctypes.cast(add_f64, ctypes.c_void_p), calls),
    }
    # Calling C the other way: Python calls bench_add_i64(acc, 1), each result fed into the next call.
    library.bench_add_i64.argtypes = [ctypes.c_int64, ctypes.c_int64]
    library.bench_add_i64.restype = ctypes.c_int64
    results["calling"] = {"ctypes": median_ns(call_loop, library.bench_add_i64, calls)}

    cffi = import_or_install("cffi")
    if cffi is None:
        results["cffi"] = "cffi is not installed and pip could not install it"
    else:
        ffi = cffi.FFI()
        ffi.cdef("int64_t bench_loop_i64(void *f, int64_t n); double bench_loop_f64(void *f, int64_t n); "
                 "int64_t bench_add_i64(int64_t a, int64_t b);")
        loops = ffi.dlopen(path)
        i64 = ffi.callback("int64_t(int64_t, int64_t)", lambda a, b: a + b)
        f64 = ffi.callback("double(double, double)", lambda a, b: a + b)
        if only == "cffi":
            loops.bench_loop_i64(ffi.cast("void *", i64), calls)
            return
        results["cffi"] = {
            "i64": median_ns(loops.bench_loop_i64, ffi.cast("void *", i64), calls),
            "f64": median_ns(loops.bench_loop_f64, ffi.cast("void *", f64), calls),
        }
        results["calling"]["cffi"] = median_ns(call_loop, loops.bench_add_i64, calls)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
