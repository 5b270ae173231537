import torch
import triton
import triton.language as tl


@triton.jit
def row_l2_norm_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    result = tl.sqrt(tl.sum(x * x, axis=0))
    tl.store(out_ptr + row, result)


def row_l2_norm_triton(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_rows, device=x.device, dtype=x.dtype)
    BLOCK = triton.next_power_of_2(n_cols)
    row_l2_norm_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=BLOCK)
    return out
