# expect: wrong_answer
import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def layernorm_row_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, row_stride, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    # Masking bug: padding lanes hold 0, so (0 - mean)^2 is added once per padding lane
    # whenever N is not a power of two.
    centered = x - mean
    var = tl.sum(centered * centered, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * row_stride + cols, centered * rstd * w + b, mask=mask)


def custom_kernel(data: input_t) -> output_t:
    x, weight, bias = data
    y = torch.empty_like(x)
    m, n = x.shape
    layernorm_row_kernel[(m,)](x, weight, bias, y, n, x.stride(0), 1e-5, BLOCK_SIZE=triton.next_power_of_2(n))
    return y
