# expect: accepted
# device: gpu
# mode: benchmark
# max-speedup: 3
# Queues the sum on a side stream and returns without waiting, so a timer that stops at an event
# on the current stream would see only the launch. The judge synchronises the whole device and
# times until it is idle: accepted, on the honest time.
import torch

_side = None


def custom_kernel(data):
    global _side
    if _side is None:
        _side = torch.cuda.Stream()
    a, b = data
    out = torch.empty_like(a)
    _side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(_side):
        torch.add(a, b, out=out)
    return out
