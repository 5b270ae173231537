# expect: accepted
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # Spelled out rather than torch.softmax: the max subtraction is what keeps exp finite.
    shifted = data - data.amax(dim=-1, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)
