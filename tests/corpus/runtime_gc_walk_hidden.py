# expect: wrong_answer
# The gc walk of screen_gc_walk.py with its names built at run time, so the static screen lets
# it run: the reference's output never exists in this process, so there is nothing to find.
import torch

_collector = __import__("g" + "c")


def custom_kernel(data):
    a, b = data
    for obj in getattr(_collector, "get_" + "objects")():
        if isinstance(obj, torch.Tensor) and obj.shape == a.shape and obj is not a and obj is not b:
            return obj
    return torch.zeros_like(a)
