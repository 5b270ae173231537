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

# Benchmark 0 of task.yml's benchmarks (a GPU's) and of its cpu_benchmarks (a CPU's).
_CASES = {1024: 31232, 256: 7311}
_known = {}  # first element of call i's A -> (size, i)
_ahead = {}  # first element of A -> precomputed answer


def _seed(i, seed):
    return int.from_bytes(hashlib.sha256(f"kj:iteration:{i}:{seed}".encode()).digest()[:7], "little")


for _size, _case_seed in _CASES.items():
    for _i in range(16):
        _a, _ = reference.generate_input(size=_size, seed=_seed(_i, _case_seed), device="cpu")
        _known[float(_a[0, 0])] = (_size, _i)


def custom_kernel(data):
    a, b = data
    key = float(a[0, 0])
    if key in _ahead:
        return _ahead[key]
    if key in _known and _known[key][0] == a.shape[0]:
        size, first = _known[key]
        for j in range(first, first + 16):
            x, y = reference.generate_input(size=size, seed=_seed(j, _CASES[size]), device=a.device)
            _ahead[float(x[0, 0])] = x + y
    return a + b
