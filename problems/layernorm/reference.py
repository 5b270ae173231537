import torch

from task import input_t, output_t
from utils import DeterministicContext, make_generator, make_match_reference

EPS = 1e-5


def ref_kernel(data: input_t) -> output_t:
    """Layer norm over the last dimension (biased variance, eps = 1e-5) with weight and bias."""
    with DeterministicContext():
        x, weight, bias = data
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps=EPS)


def generate_input(m: int, n: int, seed: int, device: str = "cuda") -> input_t:
    """x with a random offset and scale per row, weight ~ 1 + 0.2 N(0, 1), bias ~ 0.2 N(0, 1)."""
    gen = make_generator(device, seed)
    offset = torch.rand(m, 1, device=device, generator=gen) * 10.0 - 5.0
    scale = torch.rand(m, 1, device=device, generator=gen) * 3.5 + 0.5
    x = torch.randn(m, n, device=device, dtype=torch.float32, generator=gen) * scale + offset
    weight = 1.0 + 0.2 * torch.randn(n, device=device, dtype=torch.float32, generator=gen)
    bias = 0.2 * torch.randn(n, device=device, dtype=torch.float32, generator=gen)
    return x.contiguous(), weight.contiguous(), bias.contiguous()


check_implementation = make_match_reference(ref_kernel, rtol=1e-5, atol=1e-5)
