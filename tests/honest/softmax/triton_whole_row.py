# expect: accepted
# One program per row, the whole row in one power-of-two block.
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n)


def custom_kernel(data):
    x = data.contiguous()
    y = torch.empty_like(x)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    softmax_kernel[(m,)](x, y, n, x.stride(0), BLOCK=block, num_warps=8 if block >= 4096 else 4)
    return y
