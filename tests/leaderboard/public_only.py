# expect: wrong_answer
# Right on every public case (5 tests, then the 4 benchmark shapes), wrong from the first call
# of the ranked run on: it must not be ranked.
import torch

calls = 0


def custom_kernel(data):
    global calls
    calls += 1
    a, b = data
    return a + b if calls <= 9 else a - b
