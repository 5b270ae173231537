# expect: wrong_answer
# mode: leaderboard
# Seeds torch's global generator and precomputes answers for the inputs it expects, assuming the
# judge draws inputs from the global generator. The problems draw from their own generator,
# seeded per case (and per timed call, mixed with a secret in ranked runs).
import torch

torch.manual_seed(0)
_expected = {}


def custom_kernel(data):
    a, b = data
    key = tuple(a.shape)
    if key not in _expected:
        torch.manual_seed(torch.initial_seed())
        x = torch.randn(a.shape, dtype=a.dtype, device=a.device)
        y = torch.randn(a.shape, dtype=a.dtype, device=a.device)
        _expected[key] = x + y
    return _expected[key]
