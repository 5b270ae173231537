#!/usr/bin/env python3
"""Wall time of `kj eval PROBLEM SOLUTION --mode leaderboard` on the CPU for every bundled correct
solution: the development loop a competitor without a GPU waits on (docs/perf.md).

Usage (from the repository root, KJ_PYTHON set as ./test.sh sets it):
  bench/cpu_dev_loop.py --kj build/kj [--only vectoradd] [-- extra kj eval arguments]

`-- --max-time 15 --max-repeats 1000` reproduces the caps kj used on a CPU before it had CPU
defaults. Prints one row per solution: seconds of wall time, the verdict, and the timing stop
reasons of the benchmarks.
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--problems", default="problems")
    parser.add_argument("--only", action="append", help="problem names (default: all)")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds one evaluation may take before it is stopped and reported")
    parser.add_argument("extra", nargs="*", help="after --: more kj eval arguments")
    args = parser.parse_args()
    solutions = sorted(glob.glob(os.path.join(args.problems, "*", "solutions", "correct", "*")))
    if args.only:
        solutions = [s for s in solutions if s.split(os.sep)[-4] in args.only]
    print("| solution | wall (s) | verdict | benchmark stop reasons |")
    print("|---|---|---|---|")
    worst = 0.0
    for solution in solutions:
        problem = os.path.dirname(os.path.dirname(os.path.dirname(solution)))
        begin = time.monotonic()
        try:
            proc = subprocess.run([args.kj, "eval", problem, solution, "--mode", "leaderboard",
                                   "--json", *args.extra], capture_output=True, text=True,
                                  timeout=args.timeout)
        except subprocess.TimeoutExpired:
            name = os.path.relpath(solution, args.problems)
            print(f"| {name} | > {args.timeout:.0f} (stopped) | | |", flush=True)
            worst = max(worst, args.timeout)
            continue
        wall = time.monotonic() - begin
        worst = max(worst, wall)
        try:
            result = json.loads(proc.stdout)
            verdict = result["verdict"]
            reasons = sorted({b.get("stop_reason", "") for b in result.get("benchmarks", [])})
        except (ValueError, KeyError):
            verdict, reasons = f"exit {proc.returncode}", []
        name = os.path.relpath(solution, args.problems)
        print(f"| {name} | {wall:.1f} | {verdict} | {', '.join(reasons)} |", flush=True)
    print(f"\nslowest: {worst:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
