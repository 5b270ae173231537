# expect: security_violation
# The textbook escape: chroot into a subdirectory while keeping a directory fd outside, then
# walk up with fchdir and chdir(".."). The seccomp filter kills chroot.
import ctypes
import os


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    os.makedirs("/tmp/kjcorpus-jail", exist_ok=True)
    outside = os.open("/", os.O_RDONLY)
    libc.chroot(b"/tmp/kjcorpus-jail")
    os.fchdir(outside)
    for _ in range(64):
        os.chdir("..")
    libc.chroot(b".")
    a, b = data
    return a - b  # wrong on purpose: surviving the call must not look like a pass
