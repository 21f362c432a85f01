#!/usr/bin/env python3
"""Runs a command in a process where membarrier(2) fails with ENOSYS, as on a kernel built without it
(CONFIG_MEMBARRIER off) or under a container's seccomp profile that denies it: a seccomp filter, which
every process it starts inherits, then exec. DelegateKit then falls back to calls that fence themselves
(cffi_removers_use_membarrier() says 0), so the whole test suite can run that way.

    python3 Scripts/without-membarrier.py swift test --skip-build
Exits 3 when the filter cannot be installed, or on a CPU it does not know."""
import ctypes
import os
import platform
import struct
import sys

# The audit architecture and membarrier's system call number, by CPU.
TARGETS = {"x86_64": (0xC000003E, 324), "aarch64": (0xC00000B7, 283)}
machine = platform.machine()
if machine not in TARGETS:
    print(f"without-membarrier: no system call number known for {machine}", file=sys.stderr)
    sys.exit(3)
arch, membarrier = TARGETS[machine]

LOAD_WORD, JUMP_IF_EQUAL, RETURN = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
ALLOW, ERRNO, ENOSYS = 0x7FFF0000, 0x00050000, 38  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO
program = [
    (LOAD_WORD, 0, 0, 4),  # seccomp_data.arch
    (JUMP_IF_EQUAL, 0, 3, arch),  # another ABI's call: allow
    (LOAD_WORD, 0, 0, 0),  # seccomp_data.nr
    (JUMP_IF_EQUAL, 0, 1, membarrier),
    (RETURN, 0, 0, ERRNO | ENOSYS),
    (RETURN, 0, 0, ALLOW),
]
code = b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
buffer = ctypes.create_string_buffer(code, len(code))


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


libc = ctypes.CDLL(None, use_errno=True)
fprog = SockFprog(len(program), ctypes.cast(buffer, ctypes.c_void_p))
# PR_SET_NO_NEW_PRIVS, so that an unprivileged process may install a filter; PR_SET_SECCOMP, SECCOMP_MODE_FILTER.
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
    print(f"without-membarrier: the seccomp filter was refused: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
    sys.exit(3)
os.execvp(sys.argv[1], sys.argv[1:])
