#!/usr/bin/env python3
"""Runs a command in a process that may never make memory executable: prctl(PR_SET_MDWE,
PR_MDWE_REFUSE_EXEC_GAIN), which every process it starts inherits, then exec. What a hardened service
gets from systemd's MemoryDenyWriteExecute=yes, for the whole test suite.

    python3 Scripts/under-mdwe.py swift test --skip-build
Exits 3 when the kernel refuses (before Linux 6.3)."""
import ctypes
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN
    sys.exit(f"PR_SET_MDWE refused: {os.strerror(ctypes.get_errno())}")
os.execvp(sys.argv[1], sys.argv[1:])
