# expect: wrong_answer
import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    # Masking bug: padding lanes read 0.0 instead of -inf, so each adds exp(0 - max) to the sum
    # whenever N is not a power of two.
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


def custom_kernel(data: input_t) -> output_t:
    x = data.contiguous()
    y = torch.empty_like(x)
    m, n = x.shape
    softmax_row_kernel[(m,)](x, y, n, x.stride(0), BLOCK_SIZE=triton.next_power_of_2(n))
    return y
