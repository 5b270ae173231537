# expect: accepted
# mode: benchmark
# max-speedup: 6
# open-hole: timed in the submission's process only; sealed timing closes it (docs/security.md, "Sealed timing")
# An honest vector add that, until it has found it, looks through the garbage collector (the name
# built at run time, which the static screen cannot see) for the runner's timing session of the
# case, and gives that one object a sample method of its own: the runner's, with every time it
# reports divided by eight. The clock, the events, the input generator and every function the
# runner checks by identity stay as they were. Ranked ~8x faster than the kernel it runs, today
# (on a CPU, where an honest add is 2.4-3.4x faster than the reference: 18x).
import torch

_collector = __import__("g" + "c")
_found = []


def _eighth(sample):
    def sample_eighth(iteration):
        result = sample(iteration)
        return {**result, "ns": result["ns"] / 8}

    return sample_eighth


def _find_the_session():
    for obj in getattr(_collector, "get_" + "objects")():
        if type(obj).__name__ == "Case" + "Session" and "sample" not in vars(obj):
            obj.sample = _eighth(obj.sample)
            _found.append(obj)


def custom_kernel(data):
    a, b = data
    if not _found:  # found during the warm-up, before any timed call
        _find_the_session()
    return torch.add(a, b)
