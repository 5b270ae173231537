import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def partial_sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    # TODO: load this program's block under a mask (other=0.0), reduce it with tl.sum,
    # and write the partial sum to out_ptr + pid. Then reduce the partial sums again.
    pass


def custom_kernel(data: input_t) -> output_t:
    """Sum of all elements of a float32 vector.

    Args:
        data: contiguous torch.float32 tensor of shape (N,) on the judge's device.
    Returns:
        A 0-dimensional torch.float32 tensor (shape ()) holding the sum.
    """
    x = data
    block = 4096
    partials = torch.empty(triton.cdiv(x.numel(), block), device=x.device, dtype=torch.float32)
    partial_sum_kernel[(partials.numel(),)](x, partials, x.numel(), BLOCK_SIZE=block)
    raise NotImplementedError("reduce the partial sums to a 0-dim tensor")
