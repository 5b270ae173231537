import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim1_kernel(x_ptr, out_ptr, D1, D2, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for start in range(0, D1, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < D1) & (cols[None, :] < D2)
        tile = tl.load(x_ptr + b * D1 * D2 + rows[:, None] * D2 + cols[None, :], mask=mask,
                       other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(out_ptr + b * D2 + cols, acc, mask=cols < D2)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        assert dim == 1, "this translation sums over dimension 1 of a 3-d input"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, D1, D2 = x.shape
        out = torch.empty((B, 1, D2), device=x.device, dtype=x.dtype)
        grid = (B, triton.cdiv(D2, 64))
        sum_dim1_kernel[grid](x, out, D1, D2, BLOCK_R=32, BLOCK_C=64)
        return out
