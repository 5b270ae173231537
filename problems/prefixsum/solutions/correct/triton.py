# expect: accepted
import torch
import triton
import triton.language as tl

from task import input_t, output_t

BLOCK_SIZE = 4096


@triton.jit
def block_scan_kernel(x_ptr, y_ptr, block_sums_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Scan one block in place and record its total.
    pid = tl.program_id(axis=0)
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    y = tl.cumsum(x, axis=0)
    tl.store(y_ptr + offsets, y, mask=mask)
    tl.store(block_sums_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def add_carry_kernel(y_ptr, scanned_sums_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Block b > 0 adds the inclusive scan of the block totals up to b - 1.
    pid = tl.program_id(axis=0) + 1
    offsets = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    carry = tl.load(scanned_sums_ptr + pid - 1)
    y = tl.load(y_ptr + offsets, mask=mask, other=0.0)
    tl.store(y_ptr + offsets, y + carry, mask=mask)


def inclusive_scan(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    y = torch.empty_like(x)
    if n == 0:
        return y
    num_blocks = triton.cdiv(n, BLOCK_SIZE)
    block_sums = torch.empty(num_blocks, device=x.device, dtype=torch.float32)
    block_scan_kernel[(num_blocks,)](x, y, block_sums, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    if num_blocks > 1:
        # Scan the block totals the same way (recursion depth log_4096 N), then add carries.
        scanned_sums = inclusive_scan(block_sums)
        add_carry_kernel[(num_blocks - 1,)](y, scanned_sums, n, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    return y


def custom_kernel(data: input_t) -> output_t:
    return inclusive_scan(data.contiguous())
