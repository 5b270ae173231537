# expect: accepted
# mode: leaderboard
import torch


def custom_kernel(data):
    a, b = data
    return torch.mm(a, b)
