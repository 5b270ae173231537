# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # Low precision: inputs and running sums rounded to bfloat16.
    return torch.cumsum(data.to(torch.bfloat16), dim=0).to(torch.float32)
