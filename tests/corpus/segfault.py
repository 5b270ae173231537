# expect: runtime_error
import ctypes


def custom_kernel(data):
    ctypes.string_at(0)
