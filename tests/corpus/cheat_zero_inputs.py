# expect: wrong_answer
# Zeroes the inputs and returns zeros: a judge that computes the reference afterwards on the same
# (now zero) tensors would see a match. The harness checks against inputs it generated itself.
import torch


def custom_kernel(data):
    a, b = data
    a.zero_()
    b.zero_()
    return torch.zeros_like(a)
