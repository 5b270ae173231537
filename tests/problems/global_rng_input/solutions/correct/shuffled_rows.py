# expect: accepted
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # Works through the rows in a random order (drawn from the global generator), then puts them
    # back: the answer is the same, but the global generator has moved on by the next call.
    x, w = data
    order = torch.randperm(x.shape[0], device=x.device)
    out = torch.empty_like(x)
    out[order] = x[order] @ w
    return out
