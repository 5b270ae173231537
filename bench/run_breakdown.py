#!/usr/bin/env python3
"""Where the wall time of one `kj eval` goes, stage by stage, from the harness's event times.

Usage (from the repository root; on a GPU host add --device cuda:0 --python python3):
  bench/run_breakdown.py --kj build/kj --problem PROBLEM --submission FILE [--runs 3] \
      [--mode leaderboard] [-- extra kj eval arguments]

Prints one row per run: total wall, interpreter start-up and teardown (outside the harness),
loading the reference and the submission, public tests, checks of the public benchmark shapes,
ranked tests, and per benchmark the timing and the re-checks of timed outputs.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time


def stage_times(result, wall):
    marks = result.get("timeline", [])
    at = {}
    for mark in marks:
        at.setdefault(mark["event"], mark["t_s"])
    done = at.get("done", marks[-1]["t_s"] if marks else 0.0)

    def span(start, end):
        return at[end] - at[start] if start in at and end in at else 0.0

    row = {
        "wall": wall,
        "outside_harness": wall - done,
        "import": at.get("stage load_reference", 0.0),
        "load": span("stage load_reference", "stage tests public"),
        "tests": span("stage tests public", "stage benchmarks public"),
    }
    if result.get("mode") == "leaderboard":
        row["bench_checks"] = span("stage benchmarks public", "stage tests ranked")
        row["ranked_tests"] = span("stage tests ranked", "stage benchmarks ranked")
    timing = recheck = check = 0.0
    for bench in result.get("benchmarks", []):
        seconds = bench.get("seconds", {})
        timing += seconds.get("timing", 0.0)
        recheck += seconds.get("recheck", 0.0)
        check += seconds.get("run", 0.0) + seconds.get("check", 0.0)
    row["timing"] = timing
    row["rechecks"] = recheck
    row["samples"] = sum(b["summary"]["n"] for b in result.get("benchmarks", []))
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--submission", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mode", default="leaderboard")
    args, extra = parser.parse_known_args()
    extra = [x for x in extra if x != "--"]
    rows = []
    for run in range(args.runs):
        start = time.monotonic()
        proc = subprocess.run([args.kj, "eval", args.problem, args.submission, "--mode", args.mode,
                               "--json", *extra], capture_output=True, text=True)
        wall = time.monotonic() - start
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            sys.exit(f"kj printed no JSON (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        if result["verdict"] != "accepted":
            sys.exit(f"run {run}: {result['verdict']}: {result['reason']}")
        rows.append(stage_times(result, wall))
        for bench in result.get("benchmarks", []):
            print(f"  run {run} benchmark {bench['index']}: n={bench['summary']['n']} "
                  f"median={bench['summary']['median_ns'] / 1e3:.2f} µs "
                  f"stop={bench['stop_reason']} other_stream={bench.get('other_stream_samples')} "
                  f"rechecked={bench.get('rechecked')} seconds={bench.get('seconds')}", flush=True)
    keys = list(rows[0])
    print("| run | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for i, row in enumerate(rows):
        print(f"| {i} | " + " | ".join(f"{row[k]:.2f}" if k != "samples" else str(row[k])
                                       for k in keys) + " |")
    print("| median | " + " | ".join(f"{statistics.median(r[k] for r in rows):.2f}" for k in keys)
          + " |")


if __name__ == "__main__":
    main()
