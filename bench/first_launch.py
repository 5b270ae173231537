#!/usr/bin/env python3
"""Where a forked run's first Triton kernel spends its time (docs/perf.md), on a GPU host.

A parent process does what the zygote does (harness.preload, warm_triton_keys and
warm_triton_imports), then forks N children one after another, as a worker forks runs. Each
child creates its CUDA context, makes its inputs and launches a vectoradd Triton kernel twice;
all children share one Triton cache folder, so the first child compiles and the others find the
kernel there, as a run served by the compile cache does. Prints each phase's median over the
children after the first, and the first launch of the last child under cProfile (the largest
cumulative entries).

  python3 bench/first_launch.py [--children 6] [--top 30]
"""

import argparse
import cProfile
import io
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time

from triton_key import in_fork

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(profile: bool, top: int) -> dict:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
                 mask=mask)

    marks = {}
    t = time.perf_counter()
    torch.cuda.init()
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    marks["context"] = time.perf_counter() - t
    t = time.perf_counter()
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    torch.cuda.synchronize()
    marks["inputs"] = time.perf_counter() - t

    def launch():
        add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
        torch.cuda.synchronize()

    t = time.perf_counter()
    report = ""
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        launch()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(top)
        report = buf.getvalue()
    else:
        launch()
    marks["first_launch"] = time.perf_counter() - t
    t = time.perf_counter()
    launch()
    marks["second_launch"] = time.perf_counter() - t
    t = time.perf_counter()
    torch.testing.assert_close(out, x + y)
    torch.cuda.synchronize()
    marks["torch_check"] = time.perf_counter() - t
    return {"marks": marks, "profile": report}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--children", type=int, default=6)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    if args.children < 2:
        parser.error("--children: at least 2 (the first compiles, the others are measured)")
    os.environ.pop("TRITON_INTERPRET", None)
    cache = tempfile.mkdtemp(prefix="kj-first-launch-")
    os.environ["TRITON_CACHE_DIR"] = cache
    sys.path.insert(0, os.path.join(ROOT, "harness"))
    from kj_harness.harness import preload, warm_triton_imports, warm_triton_keys

    preload()
    print("zygote warmed:", warm_triton_keys(), warm_triton_imports(), flush=True)
    rows = []
    try:
        for i in range(args.children):
            row = in_fork(lambda last=i == args.children - 1: child(profile=last, top=args.top))
            if "error" in row:
                sys.exit(f"child {i}: {row['error']}")
            rows.append(row)
            print(f"child {i}: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in row["marks"].items()),
                  flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    warm = [r["marks"] for r in rows[1:]]
    print("median of the children after the first (warm Triton cache): " + ", ".join(
        f"{k} {statistics.median(m[k] for m in warm) * 1000:.1f} ms" for k in warm[0]))
    print(rows[-1]["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
