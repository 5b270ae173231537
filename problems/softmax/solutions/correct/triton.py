# expect: accepted
import torch
import triton
import triton.language as tl

from task import input_t, output_t

MAX_SINGLE_PASS = 8192


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    # Whole row in registers: one read, one write.
    row = tl.program_id(axis=0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * row_stride + cols, y, mask=mask)


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    # Rows too long for registers: one pass for a running max and rescaled sum, one to write.
    row = tl.program_id(axis=0).to(tl.int64)
    x_row = x_ptr + row * row_stride
    y_row = y_ptr + row * row_stride
    cols = tl.arange(0, BLOCK_SIZE)
    run_max = tl.full([BLOCK_SIZE], -float("inf"), dtype=tl.float32)
    run_sum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=-float("inf"))
        new_max = tl.maximum(run_max, x)
        # Lanes still at -inf on both sides would give exp(nan); keep their sum at 0.
        safe_max = tl.where(new_max == -float("inf"), 0.0, new_max)
        run_sum = run_sum * tl.exp(run_max - safe_max) + tl.exp(x - safe_max)
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    row_sum = tl.sum(run_sum * tl.exp(run_max - row_max), axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=-float("inf"))
        tl.store(y_row + start + cols, tl.exp(x - row_max) / row_sum, mask=mask)


def custom_kernel(data: input_t) -> output_t:
    x = data.contiguous()
    y = torch.empty_like(x)
    m, n = x.shape
    if m == 0 or n == 0:
        return y
    block = triton.next_power_of_2(n)
    if block <= MAX_SINGLE_PASS:
        num_warps = 4 if block <= 1024 else (8 if block <= 4096 else 16)
        softmax_row_kernel[(m,)](x, y, n, x.stride(0), BLOCK_SIZE=block, num_warps=num_warps)
    else:
        softmax_online_kernel[(m,)](x, y, n, x.stride(0), BLOCK_SIZE=4096, num_warps=8)
    return y
