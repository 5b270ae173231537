# expect: memory_limit
# args: --memory-limit 1024 --timeout 90
# A small cap and a long wall limit: on hosts where every page fault is slow (about 200 MiB/s
# on some virtual machines) filling the run's default 3 GiB would race the wall-clock limit,
# and the verdict must be memory_limit because the cap was reached, not whichever came first.
def custom_kernel(data):
    hoard = []
    while True:
        hoard.append(bytearray(64 << 20))
