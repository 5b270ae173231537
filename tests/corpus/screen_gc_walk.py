# expect: security_violation
import gc

import torch


def custom_kernel(data):
    # Look for a tensor shaped like the answer that is not an input: the reference's output.
    a, b = data
    for obj in gc.get_objects():
        if isinstance(obj, torch.Tensor) and obj.shape == a.shape and obj is not a and obj is not b:
            return obj
    return torch.zeros_like(a)
