# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    out = torch.empty(1, device=data.device, dtype=torch.float32)
    out[0] = data.sum()
    return out  # shape (1,), but the problem asks for a 0-dim tensor
