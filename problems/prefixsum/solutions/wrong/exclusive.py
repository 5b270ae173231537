# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # Exclusive scan (y[i] = x[0] + ... + x[i-1]) where an inclusive one is asked for.
    y = torch.cumsum(data, dim=0)
    return torch.cat([torch.zeros_like(y[:1]), y[:-1]])
