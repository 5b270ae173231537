import torch
import triton
import triton.language as tl

from task import input_t, output_t


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    # TODO: loop over K in BLOCK_K steps, loading masked tiles of A and B and accumulating
    # acc = tl.dot(a, b, acc, input_precision="ieee") in float32 (TF32 would fail the
    # float32 tests); then store acc converted to C's dtype under an (M, N) mask.
    pass


def custom_kernel(data: input_t) -> output_t:
    """Matrix multiplication C = A @ B for float32 or float16 inputs; C has the inputs' dtype."""
    a, b = data
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c
