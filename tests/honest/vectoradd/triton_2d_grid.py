# expect: accepted
# mode: leaderboard
# A 2D grid of tiles with row and column masks, using the tensors' strides.
import torch
import triton
import triton.language as tl


@triton.jit
def add_tile(a_ptr, b_ptr, c_ptr, rows, cols, stride, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    mask = (r < rows) & (c < cols)
    offsets = r.to(tl.int64) * stride + c
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
             mask=mask)


def custom_kernel(data):
    a, b = data
    out = torch.empty_like(a)
    rows, cols = a.shape
    grid = (triton.cdiv(rows, 64), triton.cdiv(cols, 64))
    add_tile[grid](a, b, out, rows, cols, a.stride(0), BLOCK_R=64, BLOCK_C=64, num_warps=4)
    return out
