# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    x, weight, bias = data
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, None, eps=1e-5)  # bias forgotten
