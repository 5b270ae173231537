# expect: accepted
# Small blocks, few warps, a masked tail.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
             mask=mask)


def custom_kernel(data):
    a, b = data
    c = torch.empty_like(a)
    n = a.numel()
    add_kernel[(triton.cdiv(n, 256),)](a, b, c, n, BLOCK=256, num_warps=2)
    return c
