# expect: wrong_answer
# problem: vectoradd_triton
# reason: called the reference
# A kernel_language: triton problem: launches a token Triton kernel on one element, then returns
# the reference's own answer, fetched under a name built at run time so the static rule does not
# see it. The runner's ref_kernel trips when the submission calls it.
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets))


def custom_kernel(data):
    a, b = data
    scratch = torch.empty(1, dtype=a.dtype, device=a.device)
    copy_kernel[(1,)](a, scratch, BLOCK=1)
    module = sys.modules["refer" + "ence"]
    return getattr(module, "ref_" + "kernel")(data)
