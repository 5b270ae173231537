# expect: accepted
# mode: leaderboard
import torch


def custom_kernel(data):
    return torch.cumsum(data.to(torch.float64), dim=0).to(torch.float32)
