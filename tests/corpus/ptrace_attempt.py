# expect: security_violation
import ctypes
import os

PTRACE_ATTACH = 16


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace(PTRACE_ATTACH, os.getppid(), 0, 0)
    return data[0] + data[1]
