# expect: wrong_answer
# Right on every public case (5 tests, then the 4 benchmark shapes; on a CPU the 3 of
# cpu_benchmarks and the ranked run's first test too), wrong from then on: it must not be ranked.
import torch

calls = 0


def custom_kernel(data):
    global calls
    calls += 1
    a, b = data
    return a + b if calls <= 9 else a - b
