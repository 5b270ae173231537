#!/usr/bin/env python3
"""How long a forked process takes to create its CUDA context, alone and with others at once
(docs/perf.md), on a GPU host.

A run on a GPU starts two contexts at the same moment: the harness's (its checker) and the
runner's (the submission). This forks children of a process that imported torch, as the
zygote did, in rounds of 1, 2 and 3 at once; each child times cuInit and the first allocation
(torch.cuda.init, then a one-element tensor) and its exit. If the driver serializes context
creation, two at once take about twice as long as one.

  python3 bench/context_start.py [--rounds 5] [--preload-libcuda]

--preload-libcuda loads the driver library (dlopen, no cuInit) in the parent before the forks,
as a zygote could: the children's cuInit then finds it loaded.
"""

import argparse
import json
import os
import statistics
import sys
import time


def child(write_fd: int, start_at: float) -> None:
    import torch

    while time.monotonic() < start_at:  # every child of a round starts at the same moment
        pass
    try:
        t0 = time.monotonic()
        torch.cuda.init()
        t1 = time.monotonic()
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        t2 = time.monotonic()
        got = {"init_s": t1 - t0, "first_tensor_s": t2 - t1, "context_s": t2 - t0}
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        got = {"error": repr(exc)}
    with os.fdopen(write_fd, "w") as out:
        json.dump(got, out)
    os._exit(0)


def round_of(count: int) -> list[dict]:
    start_at = time.monotonic() + 0.05
    pipes = []
    for _ in range(count):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            child(write_fd, start_at)
        os.close(write_fd)
        pipes.append((pid, read_fd))
    got = []
    for pid, read_fd in pipes:
        with os.fdopen(read_fd) as f:
            got.append(json.load(f))
        begin = time.monotonic()
        os.waitpid(pid, 0)
        got[-1]["reaped_after_s"] = time.monotonic() - begin
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--preload-libcuda", action="store_true")
    args = parser.parse_args()
    import torch  # noqa: F401 - imported before the forks, as in the zygote

    if args.preload_libcuda:
        import ctypes

        ctypes.CDLL("libcuda.so.1")

    if torch.cuda.is_initialized():
        raise SystemExit("CUDA started before the forks")
    print("| children at once | context (init + first tensor), median s | cuInit part | "
          "slowest child, median s |")
    print("|---|---|---|---|")
    for count in (1, 2, 3):
        rounds = [round_of(count) for _ in range(args.rounds)]
        failed = [c["error"] for r in rounds for c in r if "error" in c]
        if failed:
            raise SystemExit(f"a child could not start CUDA: {failed[0]}")
        every = [c for r in rounds for c in r]
        slowest = [max(c["context_s"] for c in r) for r in rounds]
        print(f"| {count} | {statistics.median(c['context_s'] for c in every):.3f} | "
              f"{statistics.median(c['init_s'] for c in every):.3f} | "
              f"{statistics.median(slowest):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
