# expect: accepted
# Honest code that comes close to every flag and reject rule of the static screen without being
# what the rule is about: none of these lines may be flagged (docs/screen.md).
import gc
import os
import time

import torch
import triton
import triton.language as tl

# Reading the clock, not replacing it (timer-patch); collecting, not walking (gc-walk).
_loaded_at = time.perf_counter()
gc.collect()
# A path, not the environment or /proc (environment-or-proc); a name ending in ref_kernel.
_here = os.path.dirname(os.path.abspath(__file__))
my_ref_kernel_notes = "written from the task description"
# A module put in eval mode, not eval() (dynamic-code).
_identity = torch.nn.Identity().eval()


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)  # program_id( is not id( (pointer-or-identity-keys)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(c_ptr + offsets, tl.load(a_ptr + offsets, mask=mask) + tl.load(b_ptr + offsets, mask=mask),
             mask=mask)


def valid(x):  # valid( is not id( either
    return x.numel() > 0


def custom_kernel(data):
    a, b = data
    c = torch.empty_like(a)
    n = a.numel()
    if valid(a):
        add_kernel[(triton.cdiv(n, 1024),)](a, b, c, n, BLOCK=1024, num_warps=4)
    # nan_to_num is not torch.nan (explicit-nan); the inputs are finite, so it changes nothing.
    return _identity(torch.nan_to_num(c))
