import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    # TODO: compute this program's offsets, load a and b under a mask, store a + b.
    pass


def custom_kernel(data: input_t) -> output_t:
    """Elementwise sum of two float16 matrices.

    Args:
        data: (A, B), contiguous torch.float16 tensors of shape (N, N) on the judge's device.
    Returns:
        A new torch.float16 tensor of shape (N, N) equal to A + B.
    """
    a, b = data
    c = torch.empty_like(a)
    n_elements = a.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](a, b, c, n_elements, BLOCK_SIZE=1024)
    return c
