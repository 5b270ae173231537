# expect: security_violation
# pidfd_getfd copies a file descriptor out of another process: the harness's result fd (3)
# would let the submission write its own verdict. The seccomp filter kills the caller.
import ctypes
import os

SYS_PIDFD_OPEN = 434  # the same number on every architecture
SYS_PIDFD_GETFD = 438


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, os.getppid(), 0)
    if pidfd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_open of the harness failed")
    stolen = libc.syscall(SYS_PIDFD_GETFD, pidfd, 3, 0)
    if stolen >= 0:
        os.write(stolen, b'{"event":"done","passed":true}\n')
    a, b = data
    return a - b  # wrong on purpose: only a forged line could make this pass
