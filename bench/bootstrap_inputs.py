#!/usr/bin/env python3
"""What `kj bootstrap` spends around each call of a row (harness/kj_harness/bootstrap.py): making
a random variant of a recorded input (`_randomize`; every test variant and every timed call makes
one) and comparing an output with the expected one (`compare`). Times N of each on one
side x side float32 tensor on --device, alternating with the same work done by an older copy of
bootstrap.py given as --baseline, for a paired ratio:

  git show 8cee402:harness/kj_harness/bootstrap.py > /tmp/bootstrap_before.py
  $KJ_PYTHON bench/bootstrap_inputs.py --baseline /tmp/bootstrap_before.py [--side 4096]
      [--calls 10] [--device cuda:0]
"""

import argparse
import importlib.util
import inspect
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "harness"))
import torch  # noqa: E402

from kj_harness import bootstrap  # noqa: E402


def load(path: str):
    spec = importlib.util.spec_from_file_location("bootstrap_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_variant(module, recorded, seed: int, device: str):
    """One random variant on `device`, the way `module` makes it (older copies drew on the host
    and took no device)."""
    if len(inspect.signature(module._randomize).parameters) == 2:
        return module._randomize(recorded, torch.Generator().manual_seed(seed)).to(device)
    generator = torch.Generator(device=device).manual_seed(seed)
    return module._randomize(recorded, generator, device)


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", type=int, default=4096, help="the tensor is side x side")
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--baseline", required=True, help="an older copy of bootstrap.py")
    args = parser.parse_args()
    modules = {"before": load(args.baseline), "now": bootstrap}
    recorded = torch.randn(args.side, args.side)
    times = {name: {"variant": [], "compare": []} for name in modules}
    for call in range(args.calls + 1):  # the first round warms both up and is not counted
        for name, module in modules.items():
            sync(args.device)
            start = time.perf_counter()
            data = make_variant(module, recorded, 1000 + call, args.device)
            sync(args.device)
            made = time.perf_counter()
            module.compare(data + 1e-6, data)
            sync(args.device)
            done = time.perf_counter()
            if call:
                times[name]["variant"].append(made - start)
                times[name]["compare"].append(done - made)
    print(f"{args.side}x{args.side} float32 on {args.device}, {args.calls} calls each, "
          f"alternating ({os.cpu_count()} cores); ms, median (paired ratio now/before):")
    for part in ("variant", "compare"):
        before, now = times["before"][part], times["now"][part]
        ratio = statistics.median(n / b for n, b in zip(now, before))
        print(f"  {part:8s} before {statistics.median(before) * 1e3:8.1f}  "
              f"now {statistics.median(now) * 1e3:8.1f}  ({ratio:.2f})")


if __name__ == "__main__":
    main()
