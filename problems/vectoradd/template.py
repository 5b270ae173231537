import torch

from task import input_t, output_t


def custom_kernel(data: input_t) -> output_t:
    """Elementwise sum of two float16 matrices.

    Args:
        data: (A, B), contiguous torch.float16 tensors of shape (N, N) on the judge's device.
    Returns:
        A new torch.float16 tensor of shape (N, N) equal to A + B.
    """
    a, b = data
    raise NotImplementedError("write your kernel here")
