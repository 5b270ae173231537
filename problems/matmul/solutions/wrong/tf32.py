# expect: wrong_answer
import torch

from task import input_t, output_t


def to_tf32(x: torch.Tensor) -> torch.Tensor:
    # Round float32 to TF32's 10-bit mantissa, as tensor cores do when TF32 is allowed
    # (spelled out so the result is the same on a CPU).
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def custom_kernel(data: input_t) -> output_t:
    a, b = data
    if a.dtype != torch.float32:
        return a @ b
    # Low precision: what torch.backends.cuda.matmul.allow_tf32 = True, or tl.dot's default
    # input_precision, computes for float32 inputs.
    return to_tf32(a) @ to_tf32(b)
