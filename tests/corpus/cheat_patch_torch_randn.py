# expect: security_violation
# mode: leaderboard
# Hooks torch.randn, which the input generator calls untimed before every call: every second
# tensor it makes completes a pair, whose sum is computed there, off the clock.
import torch

_randn = torch.randn
_made = []
_answers = {}


def _hooked(*args, **kwargs):
    t = _randn(*args, **kwargs)
    _made.append(t)
    if len(_made) % 2 == 0:
        _answers[_made[-2].data_ptr()] = _made[-2] + _made[-1]
    return t


_module = torch
setattr(_module, "ran" + "dn", _hooked)


def custom_kernel(data):
    a, b = data
    answer = _answers.pop(a.data_ptr(), None)
    return answer if answer is not None else a + b
