# expect: wrong_answer
# mode: leaderboard
# reason: timed call
# Honest when a call's shape differs from the previous call's (the judge's untimed checks); in a
# run of same-shape calls (warm-up and timed calls) it returns an empty output at once and fills
# it on a thread after returning, so the clock sees almost nothing while an output read later
# would be right. Timed outputs are copied the moment the call returns.
import threading

import torch

_previous = [None]


def _fill(out, a, b):
    torch.add(a, b, out=out)


def custom_kernel(data):
    a, b = data
    burst = _previous[0] == a.shape
    _previous[0] = a.shape
    if not burst:
        return a + b
    out = torch.empty_like(a)
    threading.Thread(target=_fill, args=(out, a, b)).start()
    return out
