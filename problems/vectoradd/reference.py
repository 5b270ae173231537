import torch

from task import input_t, output_t
from utils import DeterministicContext, make_generator, make_match_reference


def ref_kernel(data: input_t) -> output_t:
    """C = A + B in float16 (each element rounded to float16 once)."""
    with DeterministicContext():
        a, b = data
        return a + b


def generate_input(size: int, seed: int, device: str = "cuda") -> input_t:
    """Two (size, size) float16 matrices from N(0, 1), deterministic per (seed, device)."""
    gen = make_generator(device, seed)
    a = torch.randn(size, size, device=device, dtype=torch.float16, generator=gen)
    b = torch.randn(size, size, device=device, dtype=torch.float16, generator=gen)
    return a.contiguous(), b.contiguous()


check_implementation = make_match_reference(ref_kernel, rtol=1e-3, atol=1e-5)
