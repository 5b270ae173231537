import torch
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0).to(tl.float32)
    tl.store(partial_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def final_sum_kernel(partial_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def total_sum_triton(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous().view(-1)
    n = x.numel()
    BLOCK = 4096
    blocks = triton.cdiv(n, BLOCK)
    partial = torch.empty(blocks, device=x.device, dtype=torch.float32)
    partial_sum_kernel[(blocks,)](x, partial, n, BLOCK=BLOCK)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    final_sum_kernel[(1,)](partial, out, blocks, BLOCK=1024)
    return out
