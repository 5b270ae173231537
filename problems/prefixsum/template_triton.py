import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def block_scan_kernel(x_ptr, y_ptr, block_sums_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    # TODO: load this block under a mask (other=0.0), scan it with tl.cumsum, store it and
    # the block's total to block_sums_ptr + pid. A second pass then scans the block totals and
    # adds the total of all earlier blocks to each block.
    pass


def custom_kernel(data: input_t) -> output_t:
    """Inclusive prefix sum of a float32 vector of shape (N,); returns a new (N,) tensor."""
    x = data
    y = torch.empty_like(x)
    block = 4096
    block_sums = torch.empty(triton.cdiv(x.numel(), block), device=x.device, dtype=torch.float32)
    block_scan_kernel[(block_sums.numel(),)](x, y, block_sums, x.numel(), BLOCK_SIZE=block)
    raise NotImplementedError("propagate the block totals")
