# expect: security_violation
# Kernel keyrings are not namespaced: a key written here could be read by another run of the
# same host uid (a cross-sandbox channel). The seccomp filter kills add_key and keyctl.
import ctypes
import platform

NUMBERS = {"x86_64": {"add_key": 248, "keyctl": 250}, "aarch64": {"add_key": 217, "keyctl": 219}}
KEY_SPEC_USER_KEYRING = -4
KEYCTL_GET_KEYRING_ID = 0


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    nr = NUMBERS[platform.machine()]
    libc.syscall(nr["keyctl"], KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1)
    libc.syscall(nr["add_key"], b"user", b"kjcorpus", b"message", 7, KEY_SPEC_USER_KEYRING)
    a, b = data
    return a - b  # wrong on purpose: surviving the call must not look like a pass
