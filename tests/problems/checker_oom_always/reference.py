import torch

from task import input_t, output_t
from utils import make_generator


def ref_kernel(data: input_t) -> output_t:
    x, w = data
    return x @ w


def generate_input(rows: int, seed: int, device: str = "cuda") -> input_t:
    gen = make_generator(device, seed)
    x = torch.randn(rows, 16, device=device, dtype=torch.float32, generator=gen)
    w = torch.randn(16, 16, device=device, dtype=torch.float32, generator=gen)
    return x, w


def check_implementation(data: input_t, output: output_t):
    # A device that never has memory for the checker: the judge's failure, not the output's.
    raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 MiB (simulated)")
