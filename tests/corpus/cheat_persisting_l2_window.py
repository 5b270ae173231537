# expect: accepted
# device: gpu
# mode: benchmark
# max-speedup: 3
# Marks the inputs' memory as persisting in the L2 (an access-policy window on the stream) so a
# cold-cache timer would find them hot. The judge resets persisting lines before every sample,
# and the screen flags the attempt.
import ctypes

import torch

_cudart = None


class AccessPolicyWindow(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t),
                ("hitRatio", ctypes.c_float), ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


class StreamAttrValue(ctypes.Union):
    _fields_ = [("accessPolicyWindow", AccessPolicyWindow), ("pad", ctypes.c_char * 64)]


def _set_window(ptr, nbytes):
    global _cudart
    if _cudart is None:
        _cudart = ctypes.CDLL("libcudart.so")
    value = StreamAttrValue()
    value.accessPolicyWindow = AccessPolicyWindow(ptr, nbytes, 1.0, 2, 0)  # persisting on hit
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    _cudart.cudaStreamSetAttribute(stream, 1, ctypes.byref(value))  # cudaStreamAttributeAccessPolicyWindow


def custom_kernel(data):
    a, b = data
    try:
        _set_window(a.data_ptr(), a.numel() * a.element_size())
    except OSError:
        pass
    return a + b
