# expect: wrong_answer
import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def partial_sum_kernel(x_ptr, out_ptr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(out_ptr + pid, tl.sum(tl.load(x_ptr + offsets), axis=0))


def custom_kernel(data: input_t) -> output_t:
    x = data
    block = 256
    # Partial work: only whole blocks are summed, so the last N % 256 elements are dropped.
    partials = torch.zeros(max(x.numel() // block, 1), device=x.device, dtype=torch.float32)
    if x.numel() >= block:
        partial_sum_kernel[(x.numel() // block,)](x, partials, BLOCK_SIZE=block)
    return partials.sum()
