# expect: accepted
# Per-block partial sums in Triton, then PyTorch adds the partials.
import torch
import triton
import triton.language as tl


@triton.jit
def partial_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


def custom_kernel(data):
    n = data.numel()
    blocks = triton.cdiv(n, 1024)
    partials = torch.empty(blocks, dtype=torch.float32, device=data.device)
    partial_sum[(blocks,)](data, partials, n, BLOCK=1024)
    return partials.sum()
