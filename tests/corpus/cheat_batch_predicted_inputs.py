# expect: accepted
# mode: benchmark
# max-speedup: 3
# Batches timed calls: it knows how the judge derives each timed call's seed from the public seed
# in task.yml, recognises call i by its first element, and then computes the answers of calls
# i+1..i+15 in one go, so most calls are lookups and the median collapses. Timed calls use a seed
# mixed with a fresh random salt, so no input is ever recognised and every call does its own
# work: accepted, on an honest time.
import hashlib

import reference

_SIZE, _SEED = 1024, 31232  # benchmark 0 of task.yml
_known = {}  # first element of call i's A -> i
_ahead = {}  # first element of A -> precomputed answer


def _seed(i):
    return int.from_bytes(hashlib.sha256(f"kj:iteration:{i}:{_SEED}".encode()).digest()[:7], "little")


for _i in range(16):
    _a, _ = reference.generate_input(size=_SIZE, seed=_seed(_i), device="cpu")
    _known[float(_a[0, 0])] = _i


def custom_kernel(data):
    a, b = data
    key = float(a[0, 0])
    if key in _ahead:
        return _ahead[key]
    if a.shape[0] == _SIZE and key in _known:
        for j in range(_known[key], _known[key] + 16):
            x, y = reference.generate_input(size=_SIZE, seed=_seed(j), device=a.device)
            _ahead[float(x[0, 0])] = x + y
    return a + b
