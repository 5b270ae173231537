# expect: wrong_answer
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    h, tau = torch.geqrf(data)
    return torch.return_types.geqrf((torch.zeros_like(h), torch.zeros_like(tau)))
