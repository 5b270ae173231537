# expect: wrong_answer
# NaN compares false with everything, so a careless `not (abs(out - ref) > tol)` would pass it.
import torch


def custom_kernel(data):
    a, b = data
    return torch.full_like(a, float("nan"))
