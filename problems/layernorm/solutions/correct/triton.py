# expect: accepted
import torch
import triton
import triton.language as tl

from task import input_t, output_t

EPS = 1e-5
MAX_SINGLE_PASS = 8192


@triton.jit
def layernorm_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, row_stride, eps, BLOCK_SIZE: tl.constexpr):
    # Whole row in registers: one read of x, one write of y.
    row = tl.program_id(axis=0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    # Padding lanes would add mean^2 each to the variance: zero them.
    centered = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centered * centered, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * row_stride + cols, centered * rstd * w + b, mask=mask)


@triton.jit
def layernorm_long_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, row_stride, eps, BLOCK_SIZE: tl.constexpr):
    # Rows too long for registers: a pass for the mean, one for the variance, one to write.
    row = tl.program_id(axis=0).to(tl.int64)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        acc += tl.load(x_row + start + cols, mask=start + cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0)
        centered = tl.where(mask, x - mean, 0.0)
        acc += centered * centered
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + start + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + start + cols, mask=mask, other=0.0)
        tl.store(y_row + start + cols, (x - mean) * rstd * w + b, mask=mask)


def custom_kernel(data: input_t) -> output_t:
    x, weight, bias = data
    x = x.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    y = torch.empty_like(x)
    m, n = x.shape
    if m == 0 or n == 0:
        return y
    block = triton.next_power_of_2(n)
    if block <= MAX_SINGLE_PASS:
        num_warps = 4 if block <= 1024 else (8 if block <= 4096 else 16)
        layernorm_row_kernel[(m,)](x, weight, bias, y, n, x.stride(0), EPS, BLOCK_SIZE=block, num_warps=num_warps)
    else:
        layernorm_long_row_kernel[(m,)](x, weight, bias, y, n, x.stride(0), EPS, BLOCK_SIZE=4096, num_warps=8)
    return y
