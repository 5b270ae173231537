import torch
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float('inf')).to(tl.float32)
    x = x - tl.max(x, axis=0)
    result = x - tl.log(tl.sum(tl.exp(x), axis=0))
    tl.store(out_ptr + row * stride + cols, result.to(out_ptr.dtype.element_ty), mask=mask)


def log_softmax_triton(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(n_cols)
    log_softmax_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=BLOCK)
    return out
