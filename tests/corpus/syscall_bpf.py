# expect: security_violation
# eBPF programs run in the kernel, outside every namespace. Even the unprivileged subset is
# closed: the seccomp filter kills bpf().
import ctypes
import platform

NUMBERS = {"x86_64": 321, "aarch64": 280}
BPF_MAP_CREATE = 0


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 16)(2, 4, 8, 16)  # an array map: type, key size, value size, entries
    libc.syscall(NUMBERS[platform.machine()], BPF_MAP_CREATE, attr, ctypes.sizeof(attr))
    a, b = data
    return a - b  # wrong on purpose: surviving the call must not look like a pass
