# expect: accepted
# mode: benchmark
# max-speedup: 3
# Caches each answer under the identity of its input tensors (holding on to them, so an identity
# is never reused) and answers from the cache whenever the judge passes the same objects again,
# as a judge rotating a few input sets would. Every timed call gets new tensors, so the cache
# never hits: accepted, on an honest time.
_cache = {}


def custom_kernel(data):
    a, b = data
    key = (id(a), id(b))
    if key not in _cache:
        _cache[key] = (a, b, a + b)
    return _cache[key][2]
