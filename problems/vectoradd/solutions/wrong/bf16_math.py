# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    # Low precision: the sum is rounded to bfloat16 (8-bit mantissa) before going back to float16.
    return (a.to(torch.bfloat16) + b.to(torch.bfloat16)).to(torch.float16)
