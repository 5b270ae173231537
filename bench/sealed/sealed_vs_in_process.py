#!/usr/bin/env python3
"""Sealed timing against in-process timing, run by run through `kj eval` (docs/sealed-timing.md).

For each problem and solution, `--rounds` pairs of runs in one sitting: one with sealed timing
(the default) and one with `--in-process-timing`, their order alternating (ABBA), so drift of the
GPU falls on both. Per benchmark: each path's median per run, the ratio of the medians' means,
whether every sealed run's benchmark says `timing: sealed` (and why not when it does not), and
each path's wall time per run.

Usage (GPU host):
  bench/sealed/sealed_vs_in_process.py --kj build/kj --rounds 2 --json OUT \\
      --eval-args "--mode leaderboard --device cuda:0" \
      problems/vectoradd:problems/vectoradd/solutions/correct/triton.py ...
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time

PATHS = {"sealed": [], "in_process": ["--in-process-timing"]}


def run(kj: str, problem: str, solution: str, extra: list[str], path: str, timeout: int) -> dict:
    cmd = [kj, "eval", problem, solution, "--json", *PATHS[path], *extra]
    begin = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"path": path, "wall_s": time.monotonic() - begin, "error": "timeout"}
    wall = time.monotonic() - begin
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        return {"path": path, "wall_s": wall, "error": f"rc={proc.returncode}: {proc.stderr[-600:]}"}
    benches = []
    for b in result.get("benchmarks") or []:
        benches.append({"index": b.get("index"), "status": b.get("status"),
                        "median_ns": (b.get("summary") or {}).get("median_ns"),
                        "iqr_ns": (b.get("summary") or {}).get("iqr_ns"),
                        "n": (b.get("summary") or {}).get("n"), "clock": b.get("clock"),
                        "batch": b.get("batch"), "timing": b.get("timing"),
                        "timing_note": b.get("timing_note"), "seconds": b.get("seconds"),
                        "speedup": b.get("speedup")})
    return {"path": path, "wall_s": wall, "verdict": result.get("verdict"),
            "reason": result.get("reason"), "benchmarks": benches}


def summarize(pair: str, runs: list[dict]) -> list[str]:
    lines = []
    by_path = {p: [r for r in runs if r["path"] == p] for p in PATHS}
    walls = {p: statistics.mean(r["wall_s"] for r in rs) if rs else float("nan")
             for p, rs in by_path.items()}
    verdicts = {p: sorted({str(r.get("verdict") or r.get("error", "?"))[:60] for r in rs})
                for p, rs in by_path.items()}
    lines.append(f"{pair}: verdicts {verdicts}; wall per run sealed {walls['sealed']:.2f} s, "
                 f"in process {walls['in_process']:.2f} s "
                 f"(x{walls['sealed'] / walls['in_process']:.3f})")
    indices = sorted({b["index"] for r in runs for b in r.get("benchmarks", [])
                      if b.get("median_ns")}, key=lambda i: (i is None, i))
    for index in indices:
        med = {p: [b["median_ns"] for r in rs for b in r.get("benchmarks", [])
                   if b["index"] == index and b.get("median_ns")] for p, rs in by_path.items()}
        marks = sorted({str(b.get("timing")) for r in by_path["sealed"]
                        for b in r.get("benchmarks", []) if b["index"] == index})
        notes = sorted({b.get("timing_note") for r in by_path["sealed"]
                        for b in r.get("benchmarks", []) if b["index"] == index
                        and b.get("timing_note")})
        if med["sealed"] and med["in_process"]:
            ratio = statistics.mean(med["sealed"]) / statistics.mean(med["in_process"])
        else:
            ratio = float("nan")
        lines.append(f"  bench {index}: sealed {[round(m) for m in med['sealed']]} ns, "
                     f"in process {[round(m) for m in med['in_process']]} ns, ratio {ratio:.4f}, "
                     f"sealed runs' timing {marks}" + (f", notes {notes}" if notes else ""))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kj", required=True)
    parser.add_argument("--rounds", type=int, default=1, help="pairs of runs per solution")
    parser.add_argument("--timeout", type=int, default=150, help="seconds per kj eval")
    parser.add_argument("--json", help="write every run's figures here")
    parser.add_argument("--eval-args", default="", help="more kj eval options, one string")
    parser.add_argument("pairs", nargs="+", help="PROBLEM_DIR:SOLUTION")
    args = parser.parse_args()
    extra = shlex.split(args.eval_args)
    report = {}
    for pair in args.pairs:
        problem, _, solution = pair.partition(":")
        runs = []
        for r in range(args.rounds):
            order = ["sealed", "in_process"] if r % 2 == 0 else ["in_process", "sealed"]
            for path in order:
                runs.append(run(args.kj, problem, solution, extra, path, args.timeout))
        report[pair] = runs
        print("\n".join(summarize(pair, runs)), flush=True)
        if args.json:
            with open(args.json, "w") as out:
                json.dump(report, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
