# expect: runtime_error
# device: gpu
# A Triton kernel that stores far outside any allocation (4 TiB past the output): the GPU
# raises an illegal-address fault, which poisons this process's CUDA context. The runner
# reports the CUDA error; the harness, in its own process and context, is unaffected.
import torch
import triton
import triton.language as tl


@triton.jit
def add_out_of_bounds(a_ptr, b_ptr, out_ptr, n, bad_offset, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + bad_offset + offs, x, mask=mask)


def custom_kernel(data):
    a, b = data
    out = torch.empty_like(a)
    n = a.numel()
    add_out_of_bounds[(triton.cdiv(n, 1024),)](a, b, out, n, 1 << 41, BLOCK=1024)
    torch.cuda.synchronize()  # the fault surfaces here as a RuntimeError
    return out
