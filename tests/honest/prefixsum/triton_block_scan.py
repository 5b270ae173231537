# expect: accepted
# Triton scans each block; PyTorch scans the block totals; Triton adds each block's carry.
import torch
import triton
import triton.language as tl


@triton.jit
def block_scan(x_ptr, y_ptr, totals_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    y = tl.cumsum(x, axis=0)
    tl.store(y_ptr + offsets, y, mask=offsets < n)
    tl.store(totals_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def add_carry(y_ptr, carry_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    carry = tl.load(carry_ptr + pid)
    y = tl.load(y_ptr + offsets, mask=offsets < n)
    tl.store(y_ptr + offsets, y + carry, mask=offsets < n)


def custom_kernel(data):
    n = data.numel()
    block = 1024
    blocks = triton.cdiv(n, block)
    y = torch.empty_like(data)
    totals = torch.empty(blocks, dtype=torch.float32, device=data.device)
    block_scan[(blocks,)](data, y, totals, n, BLOCK=block)
    carry = (torch.cumsum(totals.to(torch.float64), dim=0) - totals.to(torch.float64)).to(torch.float32)
    add_carry[(blocks,)](y, carry, n, BLOCK=block)
    return y
