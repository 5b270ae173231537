# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # Low precision: computed in bfloat16 and widened back, about 3 significant digits.
    return torch.softmax(data.to(torch.bfloat16), dim=-1).to(torch.float32)
