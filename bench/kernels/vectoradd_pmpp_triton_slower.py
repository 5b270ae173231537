# expect: accepted
# vectoradd_pmpp_triton.py with 2 % more memory traffic: one launch whose grid has 1/50 more
# blocks, and the extra blocks redo the first 2 % of C (the same values, so still correct). A
# bandwidth-bound kernel, so about 2 % slower at 8192x8192: the known small difference A/B trials
# must find. (A submission is one file: the kernel is repeated.)
import triton
import triton.language as tl


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, n, blocks, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    pid = tl.where(pid < blocks, pid, pid - blocks)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
             mask=mask)


def custom_kernel(data):
    a, b, c = data
    n = a.numel()
    blocks = triton.cdiv(n, 4096)
    _add[(blocks + max(1, blocks // 50),)](a, b, c, n, blocks, BLOCK=4096, num_warps=8)
    return c
