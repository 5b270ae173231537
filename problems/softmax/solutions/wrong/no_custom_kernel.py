# expect: compile_error
import torch

from task import input_t, output_t


def softmax(data: input_t) -> output_t:  # misnamed: the judge looks for custom_kernel
    return torch.softmax(data, dim=-1)
