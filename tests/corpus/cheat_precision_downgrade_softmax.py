# expect: wrong_answer
# problem: softmax
# Softmax in float16 for a float32 problem: half the memory traffic, and wrong beyond the 1e-5
# relative tolerance.
import torch


def custom_kernel(data):
    return torch.softmax(data.half(), dim=-1).float()
