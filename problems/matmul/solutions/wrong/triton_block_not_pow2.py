# expect: runtime_error
import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    # tl.arange needs a power-of-two length: BLOCK=48 fails when the kernel is compiled,
    # i.e. at the first launch inside custom_kernel.
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rm * K + k, mask=rm < M, other=0.0)
        b = tl.load(b_ptr + k * N + rn, mask=rn < N, other=0.0)
        acc += a[:, None].to(tl.float32) * b[None, :].to(tl.float32)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    block = 48
    matmul_kernel[(triton.cdiv(M, block), triton.cdiv(N, block))](a, b, c, M, N, K, BLOCK=block)
    return c
