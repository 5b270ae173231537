# expect: security_violation
# Replaces torch.cuda.Event.elapsed_time so every CUDA-event interval reads 1 µs, with the names
# built at run time so the static screen does not see them. The runner compares the functions it
# times with against the ones it saw before the submission loaded.
import torch

_cuda = getattr(torch, "cu" + "da")
setattr(_cuda.Event, "elapsed" + "_time", lambda self, end: 0.001)


def custom_kernel(data):
    a, b = data
    return a + b
