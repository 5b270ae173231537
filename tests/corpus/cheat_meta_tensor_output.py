# expect: wrong_answer
# A meta tensor has the right shape and dtype and costs nothing to make: it holds no data.
import torch


def custom_kernel(data):
    a, b = data
    return torch.empty(a.shape, dtype=a.dtype, device="meta")
