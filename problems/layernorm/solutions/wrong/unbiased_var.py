# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    x, weight, bias = data
    mean = x.mean(dim=-1, keepdim=True)
    # Sample (N-1) variance instead of the population variance layer norm uses; NaN for N = 1.
    var = x.var(dim=-1, keepdim=True, unbiased=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * weight + bias
