import torch
import triton
import triton.language as tl


@triton.jit
def matmul_scale_add_kernel(a_ptr, b_ptr, c_ptr, out_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                  stride_bn, alpha, HAS_C: tl.constexpr, C_IS_ROW: tl.constexpr,
                  ACTIVATION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    acc = acc * alpha
    out_mask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_C:
        if C_IS_ROW:
            c = tl.load(c_ptr + rn, mask=rn < N, other=0.0)
            acc += c[None, :].to(tl.float32)
        else:
            c = tl.load(c_ptr + rm[:, None] * N + rn[None, :], mask=out_mask, other=0.0)
            acc += c.to(tl.float32)
    if ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    if ACTIVATION == "gelu_tanh":
        acc = acc / (1.0 + tl.exp(-2.0 * 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)))
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=out_mask)


def matmul_scale_add_triton(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, alpha: float) -> torch.Tensor:
    c = c.contiguous()
    M, K = a.shape
    N = b.shape[1]
    out = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_scale_add_kernel[grid](a, b, c, out, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                        b.stride(1), alpha, HAS_C=True, C_IS_ROW=False, ACTIVATION="none",
                        BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return out
