# expect: security_violation
# A new user namespace would make it root of its own namespace (and then mount namespaces,
# mounts); the seccomp filter kills unshare before the kernel looks at the flags.
import ctypes

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0:
        libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
    a, b = data
    return a - b  # wrong on purpose: surviving the call must not look like a pass
