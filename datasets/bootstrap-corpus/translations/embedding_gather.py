import torch
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(weight_ptr, indices_ptr, out_ptr, dim, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    row = tl.load(indices_ptr + token)
    cols = tl.arange(0, BLOCK)
    mask = cols < dim
    values = tl.load(weight_ptr + row * dim + cols, mask=mask)
    tl.store(out_ptr + token * dim + cols, values, mask=mask)


def embedding_gather_triton(weight: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    weight = weight.contiguous()
    flat = indices.contiguous().view(-1)
    dim = weight.shape[1]
    out = torch.empty((flat.numel(), dim), device=weight.device, dtype=weight.dtype)
    embedding_kernel[(flat.numel(),)](weight, flat, out, dim, BLOCK=triton.next_power_of_2(dim))
    return out.view(*indices.shape, dim)
