# expect: accepted
# One program strides over the whole vector with a vector accumulator.
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))


def custom_kernel(data):
    out = torch.empty((), dtype=torch.float32, device=data.device)
    sum_kernel[(1,)](data, out, data.numel(), BLOCK=4096)
    return out
