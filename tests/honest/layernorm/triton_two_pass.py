# expect: accepted
# One program per row, looping over the row in blocks: a pass for the mean, one for the variance
# and one to write.
import torch
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(x_row + start + cols, mask=start + cols < n, other=0.0)
    mean = tl.sum(acc, axis=0) / n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n, other=0.0)
        d = tl.where(start + cols < n, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    for start in range(0, n, BLOCK):
        mask = start + cols < n
        x = tl.load(x_row + start + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + start + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride + start + cols, (x - mean) * rstd * w + b, mask=mask)


def custom_kernel(data):
    x, weight, bias = data
    x = x.contiguous()
    y = torch.empty_like(x)
    m, n = x.shape
    layernorm_kernel[(m,)](x, weight, bias, y, n, x.stride(0), 1e-5, BLOCK=1024)
    return y
