# expect: accepted
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    return torch.sum(data)  # float32 tree reduction; returns a 0-dim tensor
