# expect: accepted
# fp16 C = A + B for reference-kernels' pmpp_v2 vectoradd_py interface (data = A, B, C).
import torch
import triton
import triton.language as tl


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(c_ptr + offsets, a + b, mask=mask)


def custom_kernel(data):
    a, b, c = data
    n = a.numel()
    _add[(triton.cdiv(n, 4096),)](a, b, c, n, BLOCK=4096, num_warps=8)
    return c
