# expect: accepted
# mode: benchmark
# max-speedup: 3
# Caches answers under a hash of the inputs' bytes: a judge that rotates a few fixed input sets
# would see most calls answered from the cache, in a fraction of the real time. Every timed call
# gets new contents, so the cache never hits and each call pays for the work (and the hash):
# accepted, on an honest time no faster than the reference's.
import hashlib

_cache = {}


def custom_kernel(data):
    a, b = data
    key = hashlib.blake2b(a.cpu().numpy().tobytes() + b.cpu().numpy().tobytes(), digest_size=16).digest()
    if key not in _cache:
        _cache[key] = a + b
    return _cache[key]
