# expect: wrong_answer
# Defines a Triton kernel to satisfy a reader, then answers with PyTorch: the runner counts Triton
# launches and finds none.
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask), mask=mask)


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    return a + b
