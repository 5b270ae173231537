# expect: accepted
# vectoradd_pmpp_triton.py plus a 3 MiB memset after it: about 2 % slower at 8192x8192, so A/B
# trials have a known small difference to find. (A submission is one file: the kernel is repeated.)
import torch
import triton
import triton.language as tl

_scratch = {}


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
             mask=mask)


def custom_kernel(data):
    a, b, c = data
    n = a.numel()
    _add[(triton.cdiv(n, 4096),)](a, b, c, n, BLOCK=4096, num_warps=8)
    if c.device not in _scratch:
        _scratch[c.device] = torch.empty(3 << 20, dtype=torch.uint8, device=c.device)
    _scratch[c.device].zero_()
    return c
