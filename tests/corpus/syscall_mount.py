# expect: security_violation
# Remount the read-only task writable, or mount a filesystem over the harness: refused by the
# kernel without capabilities anyway; the seccomp filter kills the attempt outright.
import ctypes

MS_REMOUNT = 32
MS_BIND = 4096


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount(None, b"/kj/task", None, MS_REMOUNT | MS_BIND, None)
    libc.mount(b"none", b"/kj/harness", b"tmpfs", 0, None)
    a, b = data
    return a - b  # wrong on purpose: surviving the call must not look like a pass
