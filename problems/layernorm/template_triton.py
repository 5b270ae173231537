import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, row_stride, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_SIZE)
    # TODO: load the row under a mask, compute the mean and the variance of (x - mean) over the
    # valid columns only (padding lanes must not count), normalize, apply weight and bias, store.
    pass


def custom_kernel(data: input_t) -> output_t:
    """Layer norm over the last dimension with weight and bias (eps = 1e-5); returns (M, N) float32."""
    x, weight, bias = data
    y = torch.empty_like(x)
    m, n = x.shape
    layernorm_kernel[(m,)](x, weight, bias, y, n, x.stride(0), 1e-5, BLOCK_SIZE=triton.next_power_of_2(n))
    return y
