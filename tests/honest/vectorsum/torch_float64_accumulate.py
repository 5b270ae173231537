# expect: accepted
# mode: leaderboard
# Accumulates in float64, then rounds once to float32.
import torch


def custom_kernel(data):
    return data.to(torch.float64).sum().to(torch.float32)
