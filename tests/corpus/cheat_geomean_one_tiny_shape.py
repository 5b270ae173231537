# expect: wrong_answer
# mode: leaderboard
# Ranking by geometric mean rewards making one benchmark absurdly fast: this returns at once with
# garbage on the smallest benchmark shape and is honest elsewhere. Every shape is checked.
import torch


def custom_kernel(data):
    a, b = data
    if a.shape[0] == 1024:
        return torch.empty_like(a)
    return a + b
