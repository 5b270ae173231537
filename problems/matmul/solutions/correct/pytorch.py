# expect: accepted
import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    # TF32 would fail the float32 tolerance; make sure it is off whatever the caller set.
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return torch.matmul(a, b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
