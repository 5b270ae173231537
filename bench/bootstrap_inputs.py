#!/usr/bin/env python3
"""How long `kj bootstrap` takes to make one random variant of a recorded input
(harness/kj_harness/bootstrap.py, `_randomize`): every test variant and every timed call of a row
makes one, on the host. Times N variants of one recorded float32 tensor, alternating: with the
tensor's statistics (spread, sign, mean) kept from the first variant, as the bootstrap does, and
with them computed again for each variant, as it did before. The variants are the same values
either way (checked).

  KJ_PYTHON=... $KJ_PYTHON bench/bootstrap_inputs.py [--side 4096] [--calls 10]
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "harness"))
import torch  # noqa: E402

from kj_harness import bootstrap  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", type=int, default=4096, help="the tensor is side x side")
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    recorded = torch.randn(args.side, args.side)
    kept, again = [], []
    for call in range(args.calls):
        for mode in ("kept", "again"):
            if mode == "again":
                bootstrap._float_stats.clear()
            start = time.perf_counter()
            variant = bootstrap._randomize(recorded, torch.Generator().manual_seed(1000 + call))
            (kept if mode == "kept" else again).append(time.perf_counter() - start)
            if mode == "kept":
                first = variant
            elif not torch.equal(first, variant):
                sys.exit("the two ways made different values")
    print(f"{args.side}x{args.side} float32, {args.calls} variants each, alternating "
          f"({os.cpu_count()} cores): statistics kept {statistics.median(kept[1:]) * 1e3:.0f} ms "
          f"a variant (median after the first), computed per variant "
          f"{statistics.median(again) * 1e3:.0f} ms; ratio "
          f"{statistics.median(k / a for k, a in zip(kept[1:], again[1:])):.2f}")


if __name__ == "__main__":
    main()
