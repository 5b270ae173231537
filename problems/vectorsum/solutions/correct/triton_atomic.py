# expect: accepted
import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def sum_atomic_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr, BLOCKS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(axis=0)
    base = pid.to(tl.int64) * (BLOCK_SIZE * BLOCKS_PER_PROGRAM)
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for i in range(BLOCKS_PER_PROGRAM):
        offsets = base + i * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    # One atomic per program; the order of the additions varies from run to run.
    tl.atomic_add(out_ptr, tl.sum(acc, axis=0))


def custom_kernel(data: input_t) -> output_t:
    x = data.contiguous()
    n = x.numel()
    out = torch.zeros((), device=x.device, dtype=torch.float32)
    block, per_program = 1024, 8
    grid = (triton.cdiv(n, block * per_program),)
    sum_atomic_kernel[grid](x, out, n, BLOCK_SIZE=block, BLOCKS_PER_PROGRAM=per_program, num_warps=4)
    return out
