# expect: runtime_error
# device: gpu
# Forks after CUDA is initialised and computes in the child: a CUDA context does not survive
# fork, so the child's first CUDA call fails ("Cannot re-initialize CUDA in forked
# subprocess"), and the parent, which waits for the child's answer, raises (also when the
# child hangs instead).
import os
import pickle
import select
import signal

import torch


def custom_kernel(data):
    a, b = data
    torch.cuda.synchronize()  # CUDA is initialised in this process by now
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            result = ("ok", (a + b).cpu())
        except BaseException as exc:  # noqa: BLE001
            result = ("error", f"{type(exc).__name__}: {exc}")
        with os.fdopen(write_end, "wb") as f:
            pickle.dump(result, f)
        os._exit(0)
    os.close(write_end)
    ready, _, _ = select.select([read_end], [], [], 10)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise RuntimeError("the forked child hung in its first CUDA call")
    with os.fdopen(read_end, "rb") as f:
        status, value = pickle.load(f)
    os.waitpid(pid, 0)
    if status != "ok":
        raise RuntimeError(f"the forked child could not use CUDA: {value}")
    return value.to(a.device)
