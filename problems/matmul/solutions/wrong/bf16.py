# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    # Low precision: bfloat16 inputs keep only 8 mantissa bits.
    return (a.to(torch.bfloat16) @ b.to(torch.bfloat16)).to(a.dtype)
