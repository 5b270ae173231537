# expect: wrong_answer
# mode: leaderboard
# Does the work once per shape and replays that output for every later call of the same shape.
_last = {}


def custom_kernel(data):
    a, b = data
    if a.shape not in _last:
        _last[a.shape] = a + b
    return _last[a.shape]
