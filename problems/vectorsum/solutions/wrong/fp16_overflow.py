# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # Low precision with overflow: sums beyond 65504 become inf in float16.
    return data.half().sum(dtype=torch.float16).float()
