# expect: accepted
# mode: benchmark
# max-speedup: 3
# Caches each answer under its inputs' addresses (holding on to the inputs, so an address is
# never reused by new data) and answers from the cache when the judge passes the same buffers
# again, as a judge rotating a few input sets would. Every timed call gets new buffers with new
# numbers, so the cache never hits: accepted, on an honest time.
_cache = {}


def custom_kernel(data):
    a, b = data
    key = (a.data_ptr(), b.data_ptr(), tuple(a.shape))
    if key not in _cache:
        _cache[key] = (a, b, a + b)
    return _cache[key][2]
