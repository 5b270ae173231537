# expect: accepted
# mode: benchmark
# device: gpu
# max-speedup: 1.08
# open-hole: timed in the submission's process only; sealed timing closes it (docs/security.md, "Sealed timing")
# A thread that writes the right answer into kept outputs after the clock stopped. Short calls
# are timed as replays of a CUDA graph captured once; the outputs the runner keeps for its
# re-check are then the graph's own output buffers, not copies. While it is being captured this
# submission adds only part of each vector (half, or 80 % of the larger ones, so the time stays
# above the physical floor); it remembers each captured call's buffers, and a thread adds them
# in full whenever the runner is outside a timed window (the garbage collector on). The re-check,
# which reads those buffers after the last sample, finds them right. Calls that are not captured
# (the checks, and every per-call timing) add in full. On a GPU, in process: the graph-timed
# cases are 1.2-1.4x faster than the kernel; on a CPU nothing is captured and it is honest.
import threading
import time

import torch

_collector = __import__("g" + "c")
_captured = []
_thread = []


def _fix_outside_windows():
    side = torch.cuda.Stream()
    while True:
        if _collector.isenabled():
            with torch.cuda.stream(side):
                for a, b, out in list(_captured):
                    torch.add(a, b, out=out)
        time.sleep(2e-5)


def custom_kernel(data):
    a, b = data
    if not (a.is_cuda and torch.cuda.is_current_stream_capturing()):
        return torch.add(a, b)
    out = torch.empty_like(a)
    flat_a, flat_b, flat_out = a.view(-1), b.view(-1), out.view(-1)
    part = flat_a.numel() // 2 if flat_a.numel() <= 1 << 20 else flat_a.numel() * 4 // 5
    torch.add(flat_a[:part], flat_b[:part], out=flat_out[:part])
    _captured.append((a, b, out))
    del _captured[:-512]
    if not _thread:
        _thread.append(threading.Thread(target=_fix_outside_windows, daemon=True))
        _thread[0].start()
    return out
