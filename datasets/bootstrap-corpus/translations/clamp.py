import torch
import triton
import triton.language as tl


@triton.jit
def clamp_kernel(x_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    result = tl.minimum(tl.maximum(x, lo), hi)
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


def clamp_triton(x: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    clamp_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, lo, hi, BLOCK=BLOCK)
    return out
