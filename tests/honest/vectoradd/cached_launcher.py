# expect: accepted
# Caches one launcher per (shape, dtype): the cache holds launch settings, never results.
import functools

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
             mask=mask)


@functools.lru_cache(maxsize=64)
def launcher(numel):
    block = 1024 if numel >= 1 << 16 else 128
    grid = (triton.cdiv(numel, block),)
    return lambda a, b, c: add_kernel[grid](a, b, c, numel, BLOCK=block, num_warps=4)


def custom_kernel(data):
    a, b = data
    c = torch.empty_like(a)
    launcher(a.numel())(a, b, c)
    return c
