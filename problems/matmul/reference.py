import torch

from task import input_t, output_t
from utils import DeterministicContext, check_close, make_generator

DTYPES = {"float32": torch.float32, "float16": torch.float16}
# (rtol, atol per sqrt(K)): rounding errors of a K-term dot product grow like sqrt(K).
TOLERANCES = {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 1e-3)}


def ref_kernel(data: input_t) -> output_t:
    """C = A @ B with TF32 off: full float32 products, float32 accumulation for float16."""
    with DeterministicContext():
        a, b = data
        return a @ b


def generate_input(m: int, n: int, k: int, dtype: str, seed: int, device: str = "cuda") -> input_t:
    """A (m, k) and B (k, n) from N(0, 1) in `dtype`, deterministic per (seed, device)."""
    gen = make_generator(device, seed)
    torch_dtype = DTYPES[dtype]
    a = torch.randn(m, k, device=device, dtype=torch_dtype, generator=gen)
    b = torch.randn(k, n, device=device, dtype=torch_dtype, generator=gen)
    return a.contiguous(), b.contiguous()


def check_implementation(data: input_t, output: output_t) -> tuple[bool, str]:
    a, _ = data
    rtol, atol_per_sqrt_k = TOLERANCES[a.dtype]
    atol = atol_per_sqrt_k * max(a.shape[1], 1) ** 0.5
    return check_close(output, ref_kernel(data), rtol=rtol, atol=atol)
