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


def forked(runs: int) -> list[dict]:
    """The same two calls in forks of this process after harness.warm_triton_keys()."""
    sys.path.insert(0, os.path.join(ROOT, "harness"))
    os.environ.pop("TRITON_INTERPRET", None)
    from kj_harness.harness import warm_triton_keys
    from triton.backends.nvidia.compiler import get_ptxas_version
    from triton.runtime.cache import triton_key

    warm_triton_keys()
    rows = []
    for _ in range(runs):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            t = time.perf_counter()
            triton_key()
            key_s = time.perf_counter() - t
            t = time.perf_counter()
            get_ptxas_version(90)
            os.write(write, json.dumps({"key_s": key_s,
                                        "ptxas_s": time.perf_counter() - t}).encode())
            os._exit(0)
        os.close(write)
        data = os.read(read, 4096)
        os.close(read)
        os.waitpid(pid, 0)
        rows.append(json.loads(data))
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
