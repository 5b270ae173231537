# expect: accepted
# Works on flat views and reshapes the result back.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offsets = start + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def custom_kernel(data):
    a, b = data
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    flat_c = torch.empty_like(flat_a)
    n = flat_a.numel()
    add_kernel[(triton.cdiv(n, 2048),)](flat_a, flat_b, flat_c, n, BLOCK=2048, num_warps=8)
    return flat_c.view(a.shape)
