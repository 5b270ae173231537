# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # No max subtraction: exp overflows to inf for x > 88 and inf / inf gives NaN.
    e = torch.exp(data)
    return e / e.sum(dim=-1, keepdim=True)
