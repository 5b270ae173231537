# expect: accepted
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    x, weight, bias = data
    mean = x.mean(dim=-1, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dim=-1, keepdim=True)  # biased variance
    return centered * torch.rsqrt(var + 1e-5) * weight + bias
