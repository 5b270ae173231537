# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # Low precision: the sum comes back as bfloat16 (about 3 significant digits).
    return data.sum(dtype=torch.bfloat16).to(torch.float32)
