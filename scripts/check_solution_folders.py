#!/usr/bin/env python3
"""Judges problems whose solutions declare nothing (e.g. gpu-mode/reference-kernels' pmpp_v2)
by their folder: solutions/correct/* must be accepted, solutions/wrong/* must not be. A wrong
solution that passes the tests is also run in benchmark mode, whose cases are checked too.

Usage: check_solution_folders.py --kj build/kj [--device cuda:0] PROBLEM_DIR...
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import time


def evaluate(kj, problem, path, mode, device):
    cmd = [kj, "eval", problem, path, "--json", "--device", device, "--mode", mode,
           "--max-repeats", "10", "--max-time", "2"]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        return "no-json", proc.stderr[-300:], time.monotonic() - start
    return result["verdict"], result["reason"], time.monotonic() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("problems", nargs="+")
    args = parser.parse_args()
    passed = failed = 0
    for problem in args.problems:
        name = os.path.basename(os.path.normpath(problem))
        for path in sorted(glob.glob(os.path.join(problem, "solutions", "*", "*"))):
            folder = os.path.basename(os.path.dirname(path))
            verdict, reason, secs = evaluate(args.kj, problem, path, "test", args.device)
            shown = f"test: {verdict} ({secs:.1f} s)"
            if folder == "wrong" and verdict == "accepted":
                verdict, reason, secs = evaluate(args.kj, problem, path, "benchmark", args.device)
                shown += f"; benchmark: {verdict} ({secs:.1f} s)"
            ok = (verdict == "accepted") == (folder == "correct")
            passed += ok
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}/{folder}/{os.path.basename(path)}: {shown} — {reason}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
