# expect: accepted
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    # A torch.return_types.geqrf whose H is column-major, as LAPACK leaves it.
    return torch.geqrf(data)
