import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK_SIZE)
    # TODO: load the row (padding lanes with -inf), subtract its max, exponentiate,
    # divide by the sum and store under the column mask.
    pass


def custom_kernel(data: input_t) -> output_t:
    """Row-wise softmax.

    Args:
        data: contiguous torch.float32 tensor x of shape (M, N) on the judge's device.
    Returns:
        A new torch.float32 tensor of shape (M, N).
    """
    x = data
    y = torch.empty_like(x)
    m, n = x.shape
    softmax_kernel[(m,)](x, y, n, x.stride(0), BLOCK_SIZE=triton.next_power_of_2(n))
    return y
