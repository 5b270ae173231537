# expect: accepted
# mode: benchmark
# device: gpu
# max-speedup: 1.08
# open-hole: timed in the submission's process only; sealed timing closes it (docs/security.md, "Sealed timing")
# An honest vector add with a thread beside it. The runner switches the garbage collector off
# for each timed window (so no collection pause is timed); the thread watches for that and, inside
# the window, replaces torch.cuda.Event.elapsed_time with a fake that puts the original back the
# first time it is read and returns at most 1.1 times the time the memory system allows for the
# window's calls (a fake faster than the physical floor would be caught). When the runner then
# compares its functions by identity, the original is back in place. Works on per-call and graph
# timing alike (the graph's batch is the number of calls made while capturing). On a GPU, in
# process: ~1.3x faster than the kernel it runs; on a CPU, where no event is read, it is honest.
import threading
import time

import torch

_collector = __import__("g" + "c")
_event = torch.cuda.Event
_name = "elapsed" + "_time"
_original = getattr(_event, _name)
_state = {"bytes": 0, "batch": 0, "capturing": False, "thread": None}
_PEAK = {"H200": 4.8e12, "H100": 3.35e12}  # datasheet bytes/s


def _floor_ms() -> float:
    name = torch.cuda.get_device_name()
    peak = next((v for k, v in _PEAK.items() if k in name), 3.35e12)
    return _state["bytes"] / peak * 1e3 * max(1, _state["batch"])


def _fake(start, end):
    setattr(_event, _name, _original)  # read once: back before anyone compares
    real = _original(start, end)
    return min(real, 1.1 * _floor_ms())


def _install_in_windows():
    while True:
        if not _collector.isenabled() and getattr(_event, _name) is _original and _state["bytes"]:
            setattr(_event, _name, _fake)
        time.sleep(2e-5)


def custom_kernel(data):
    a, b = data
    if not a.is_cuda:
        return torch.add(a, b)
    # The calls made while capturing are the batch each graph sample times; any other call
    # means samples of one call each again.
    capturing = torch.cuda.is_current_stream_capturing()
    _state["batch"] = _state["batch"] + 1 if capturing and _state["capturing"] else int(capturing)
    _state["capturing"] = capturing
    _state["bytes"] = 3 * a.numel() * a.element_size()
    if _state["thread"] is None:
        _state["thread"] = threading.Thread(target=_install_in_windows, daemon=True)
        _state["thread"].start()
    return torch.add(a, b)
