#!/usr/bin/env python3
"""What a run's first Triton kernel costs before any cache lookup (docs/perf.md): Triton's key,
the hash of its own sources and of libtriton.so, and ptxas's version, each computed once per
process. Times both in N fresh interpreters, and again in forks of a process that computed them
first, as the zygote does (harness.warm_triton_keys). Run with the harness interpreter:

  $KJ_PYTHON bench/triton_key.py [--runs 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = """
import json, os, time
os.environ.pop("TRITON_INTERPRET", None)
from triton.runtime.cache import triton_key
from triton.backends.nvidia.compiler import get_ptxas_version
t = time.perf_counter(); triton_key(); key_s = time.perf_counter() - t
t = time.perf_counter(); get_ptxas_version(90); ptxas_s = time.perf_counter() - t
print(json.dumps({"key_s": key_s, "ptxas_s": ptxas_s}))
"""


def in_fork(work) -> dict:
    """work() in a child forked from this process: its JSON result, or {"error": ...}."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            got = work()
        except BaseException as exc:  # noqa: BLE001 - reported by the parent
            got = {"error": repr(exc)}
        with os.fdopen(write_fd, "w") as out:
            json.dump(got, out)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as out:
        got = json.load(out)
    os.waitpid(pid, 0)
    return got


def forked(runs: int) -> list[dict]:
    """The same two calls in forks of this process after harness.warm_triton_keys()."""
    sys.path.insert(0, os.path.join(ROOT, "harness"))
    os.environ.pop("TRITON_INTERPRET", None)
    from kj_harness.harness import warm_triton_keys
    from triton.backends.nvidia.compiler import get_ptxas_version
    from triton.runtime.cache import triton_key

    def probe() -> dict:
        t = time.perf_counter()
        triton_key()
        key_s = time.perf_counter() - t
        t = time.perf_counter()
        get_ptxas_version(90)
        return {"key_s": key_s, "ptxas_s": time.perf_counter() - t}

    warm_triton_keys()
    rows = [in_fork(probe) for _ in range(runs)]
    if any("error" in row for row in rows):
        sys.exit(f"a fork failed: {next(r for r in rows if 'error' in r)['error']}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    fresh = [json.loads(subprocess.run([sys.executable, "-c", PROBE], check=True,
                                       capture_output=True, text=True).stdout)
             for _ in range(args.runs)]
    warm = forked(args.runs)
    for name, rows in (("fresh interpreter", fresh), ("fork of a warmed process", warm)):
        for key in ("key_s", "ptxas_s"):
            values = [r[key] for r in rows]
            print(f"{name:26s} {key:8s} median {statistics.median(values) * 1e3:9.3f} ms "
                  f"(min {min(values) * 1e3:.3f}, max {max(values) * 1e3:.3f}, {len(values)} runs)")


if __name__ == "__main__":
    main()
