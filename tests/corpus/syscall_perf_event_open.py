# expect: security_violation
# Hardware counters and kernel tracepoints would observe other processes on the machine (and
# time other submissions); the seccomp filter kills perf_event_open.
import ctypes
import platform

NUMBERS = {"x86_64": 298, "aarch64": 241}
PERF_TYPE_HARDWARE = 0
PERF_COUNT_HW_CPU_CYCLES = 0


def custom_kernel(data):
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 32)()
    attr[0] = PERF_TYPE_HARDWARE
    attr[1] = ctypes.sizeof(attr)
    attr[2] = PERF_COUNT_HW_CPU_CYCLES
    libc.syscall(NUMBERS[platform.machine()], attr, -1, 0, -1, 0)  # every process on cpu 0
    a, b = data
    return a - b  # wrong on purpose: surviving the call must not look like a pass
