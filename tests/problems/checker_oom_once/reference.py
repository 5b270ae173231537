import torch

from task import input_t, output_t
from utils import make_generator, match_reference

_tries = []


def ref_kernel(data: input_t) -> output_t:
    x, w = data
    return x @ w


def generate_input(rows: int, seed: int, device: str = "cuda") -> input_t:
    gen = make_generator(device, seed)
    x = torch.randn(rows, 16, device=device, dtype=torch.float32, generator=gen)
    w = torch.randn(16, 16, device=device, dtype=torch.float32, generator=gen)
    return x, w


def check_implementation(data: input_t, output: output_t):
    # The first try of every check finds the device's memory taken, as when other evaluations
    # share the GPU; the judge must wait and check again, never blame the output.
    _tries.append(1)
    if len(_tries) % 2 == 1:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 MiB (simulated)")
    return match_reference(data, output, ref_kernel, rtol=1e-4, atol=1e-4)
