# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    x, weight, bias = data
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    # eps left out: a row with zero variance divides 0 by 0 and gives NaN.
    return (x - mean) / torch.sqrt(var) * weight + bias
