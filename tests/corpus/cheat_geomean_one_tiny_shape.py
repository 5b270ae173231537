# expect: wrong_answer
# mode: leaderboard
# Ranking by geometric mean rewards making one benchmark absurdly fast: this returns at once with
# garbage on the smallest benchmark shape (1024 on a GPU; 256 among task.yml's cpu_benchmarks, which
# a CPU runs) and is honest elsewhere. Every shape is checked.
import torch


def custom_kernel(data):
    a, b = data
    if a.shape[0] in (256, 1024):
        return torch.empty_like(a)
    return a + b
