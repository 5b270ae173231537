# expect: security_violation
# mode: leaderboard
# Replaces time.perf_counter_ns (the CPU clock) with one that advances 1 ns per read, hidden from
# the screen; installed on the first timed call so loading looks clean.
import itertools

import torch

_clock = __import__("ti" + "me")
_ticks = itertools.count(1)
_calls = [0]


def custom_kernel(data):
    a, b = data
    _calls[0] += 1
    if _calls[0] == 3:
        setattr(_clock, "perf_counter" + "_ns", lambda: next(_ticks))
    return a + b
