# expect: security_violation
# mode: leaderboard
# Inside a timed call, replaces the clock with one that returns "no time passed" once and then
# puts the real clock back, so a check after the call would find the original in place. The
# judge's clock was bound before the submission loaded, so the fake is never read, never
# restores itself, and the check after the call finds it.
import torch

_clock = __import__("ti" + "me")
_name = "perf_counter" + "_ns"
_calls = [0]


def custom_kernel(data):
    a, b = data
    _calls[0] += 1
    if _calls[0] > 2:
        real = getattr(_clock, _name)
        start = real()

        def once():
            setattr(_clock, _name, real)
            return start + 1

        setattr(_clock, _name, once)
    return a + b
