#!/usr/bin/env python3
"""What one timed sample costs the host (docs/perf.md), on a GPU host.

A ranked case stops when its samples are precise enough, after at least a minimum time; a
sample's wall time decides how many fit. For a benchmark case of a problem this lays out the
task as kj does, makes a CaseSession (harness/kj_harness/timing.py) around the submission's
custom_kernel with kj's input generation, prepares it (graph batches for short kernels) and
takes samples, printing: the cost of one generated input with kj's seeding and with
torch.manual_seed (what it used before); for each graph-batch length asked for
(`--graph-sample-us`, the `graph_sample_ns` setting), the wall time per sample, the median, the
robust spread and where the stopping rule, replayed over the series, would have stopped; and
the largest entries of a profile of the samples.

  python3 bench/sample_cost.py --kj build/kj --problem PROBLEM --submission FILE --case 0 \\
      [--graph-sample-us 0 150 300]
"""

import argparse
import cProfile
import importlib
import io
import os
import pstats
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "sealed"))
sys.path.insert(0, os.path.join(ROOT, "harness"))

from fence_probe import load_case  # noqa: E402


def per_call_us(work, count: int) -> float:
    begin = time.perf_counter()
    for i in range(count):
        work(i)
    return (time.perf_counter() - begin) / count * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kj", required=True)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--submission", required=True)
    parser.add_argument("--case", type=int, default=0)
    parser.add_argument("--samples", type=int, default=150,
                        help="samples of each graph-batch length")
    parser.add_argument("--graph-sample-us", type=float, nargs="+", default=[0.0],
                        help="graph batches lasting at least this long on the device (0: today's)")
    parser.add_argument("--profiled", type=int, default=40, help="samples under the profiler")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()

    import torch

    from kj_harness import timing
    from kj_harness.harness import seed_global_generators

    task_dir = tempfile.mkdtemp(prefix="kj-sample-cost-")
    case, reference = load_case(args, task_dir)
    torch.cuda.init()
    submission = importlib.import_module("submission")

    def generate(call_args: dict):
        seed_global_generators(call_args)
        return reference.generate_input(**call_args)

    def generate_before(call_args: dict):
        torch.manual_seed(int(call_args.get("seed", 0)))
        return reference.generate_input(**call_args)

    for name, work in (("kj's seeding + generate_input", generate),
                       ("torch.manual_seed + generate_input", generate_before),
                       ("generate_input alone", lambda a: reference.generate_input(**a))):
        work(timing.iteration_args(case, 0))
        torch.cuda.synchronize()
        cost = per_call_us(lambda i: work(timing.iteration_args(case, i)), 200)
        torch.cuda.synchronize()
        print(f"one input, {name}: {cost:.1f} µs of host time")

    # Each graph-batch length: a series of samples, unprofiled, and the stopping rule replayed
    # over its prefixes with their wall times (what a ranked case would have taken).
    for sample_us in args.graph_sample_us:
        settings = timing.settings_from({"graph_sample_ns": sample_us * 1e3})
        session = timing.CaseSession(submission.custom_kernel, generate, "cuda", settings, case)
        info = session.prepare()
        session.sample(0)
        series, walls = [], []
        begin = time.perf_counter()
        for i in range(1, args.samples + 1):
            series.append(session.sample(i)["ns"])
            walls.append(time.perf_counter() - begin)
        stop = next((n for n in range(1, len(series) + 1)
                     if timing.stop_reason(series[:n], walls[n - 1], settings)), None)
        ordered = sorted(series)
        median = timing._quantile(ordered, 0.5)
        sigma = (timing._quantile(ordered, 0.75) - timing._quantile(ordered, 0.25)) / 1.349
        print(f"graph sample >= {sample_us:g} us: method {info['method']}, batch {session.batch}, "
              f"{walls[-1] / len(series) * 1e3:.2f} ms a sample, median {median:.1f} ns a call, "
              f"robust stdev {sigma / median * 100:.2f} %, "
              + (f"the rule stops after {stop} samples, {walls[stop - 1]:.3f} s, at median "
                 f"{timing._quantile(sorted(series[:stop]), 0.5):.1f} ns"
                 if stop else f"the rule had not stopped after {len(series)} samples"))
        del session
        torch.cuda.synchronize()
        torch.cuda.empty_cache()

    session = timing.CaseSession(submission.custom_kernel, generate, "cuda",
                                 timing.settings_from({}), case)
    info = session.prepare()
    print(f"prepared: {info}")
    session.sample(0)
    profile = cProfile.Profile()
    begin = time.perf_counter()
    profile.enable()
    for i in range(1, args.profiled + 1):
        session.sample(i)
    profile.disable()
    wall = (time.perf_counter() - begin) / args.profiled
    print(f"{args.profiled} samples: {wall * 1e3:.2f} ms a sample (under the profiler), "
          f"batch {session.batch}")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
