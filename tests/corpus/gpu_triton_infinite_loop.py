# expect: time_limit
# device: gpu
# A Triton kernel that never ends: it spins on a flag in device memory that nothing sets (a
# volatile load, so the compiler cannot hoist it). Data-center GPUs have no kernel watchdog,
# and CPU time does not see GPU time: only the wall-clock limit ends it, by killing the
# process, which makes the driver tear the context (and the kernel) down.
import torch
import triton
import triton.language as tl


@triton.jit
def spin_kernel(flag_ptr, out_ptr, a_ptr, b_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    done = tl.load(flag_ptr, volatile=True)
    while done == 0:
        done = tl.load(flag_ptr, volatile=True)
    x = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


def custom_kernel(data):
    a, b = data
    out = torch.empty_like(a)
    flag = torch.zeros(1, dtype=torch.int32, device=a.device)
    n = a.numel()
    spin_kernel[(triton.cdiv(n, 1024),)](flag, out, a, b, n, BLOCK=1024)
    torch.cuda.synchronize()
    return out
