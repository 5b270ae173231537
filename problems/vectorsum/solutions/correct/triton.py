# expect: accepted
import torch
import triton
import triton.language as tl

from task import input_t, output_t

BLOCK_SIZE = 4096


@triton.jit
def partial_sum_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


def custom_kernel(data: input_t) -> output_t:
    # Deterministic multi-pass tree: each pass turns n values into cdiv(n, BLOCK_SIZE) block sums.
    x = data.contiguous()
    while True:
        n = x.numel()
        partials = torch.empty(triton.cdiv(n, BLOCK_SIZE), device=x.device, dtype=torch.float32)
        partial_sum_kernel[(partials.numel(),)](x, partials, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        x = partials
        if x.numel() == 1:
            return x.reshape(())
