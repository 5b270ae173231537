import torch

from task import input_t, output_t
from utils import make_generator, make_match_reference


def ref_kernel(data: input_t) -> output_t:
    x, w = data
    return x @ w


def generate_input(rows: int, seed: int, device: str = "cuda") -> input_t:
    gen = make_generator(device, seed)
    x = torch.randn(rows, 64, device=device, dtype=torch.float32, generator=gen)
    w = torch.randn(64, 64, device=device, dtype=torch.float32)  # the global generator
    return x, w


check_implementation = make_match_reference(ref_kernel, rtol=1e-4, atol=1e-4)
