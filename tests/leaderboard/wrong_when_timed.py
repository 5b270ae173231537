# expect: wrong_answer
# Right on every checked call before timing (with --case 0: 5 public tests, 1 public benchmark
# check, 5 ranked tests, 1 ranked benchmark check), wrong on every call after: only the re-check
# of timed outputs can catch it.
calls = 0


def custom_kernel(data):
    global calls
    calls += 1
    a, b = data
    return a + b if calls <= 12 else a - b
