# expect: wrong_answer
# problem: vectoradd_triton
# reason: no Triton kernel was launched
# A kernel_language: triton problem: defines a Triton kernel so the static rule is met, then
# answers with PyTorch. The runner counts Triton launches per call.
import triton
import triton.language as tl


@triton.jit
def unused_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def custom_kernel(data):
    a, b = data
    return a + b
