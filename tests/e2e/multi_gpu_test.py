#!/usr/bin/env python3
"""Multi-rank (multi_gpu) problems on the CPU: problems/allreduce_mean with world_size 2, one
sandboxed harness per rank, gloo between them (docs/multi-gpu.md).

- every declared solution gets its verdict (`kj problem check`), and where it declares
  `# reason: <text>` the reason names it (the rank that failed);
- benchmark mode: accepted, both ranks listed, each benchmark's median is at least every rank's
  own median (a sample is the slowest rank's time); the speedup comes from the reference timed
  alone after the submission's ranks ended (its own job, one sandbox per rank: reference samples,
  no more than the submission's, and the reference's wall time), not beside the submission;
- leaderboard mode: the secret run covers every test and benchmark on both ranks, and a solution
  wrong on rank 1 only is caught there too, named as rank 1.

Usage: multi_gpu_test.py --kj KJ --root REPO
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

PROBLEM = "problems/allreduce_mean"


def kj_json(kj, args, timeout=900):
    begin = time.monotonic()
    proc = subprocess.run([kj, *args, "--json"], capture_output=True, text=True, timeout=timeout)
    try:
        return json.loads(proc.stdout), time.monotonic() - begin
    except ValueError:
        raise AssertionError(f"kj {' '.join(args)} printed no JSON (exit {proc.returncode})\n"
                             f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}") from None


class Checks:
    def __init__(self):
        self.failed = 0

    def expect(self, condition, what):
        print(f"{'ok  ' if condition else 'FAIL'} {what}")
        self.failed += not condition


def declared_reasons(problem_dir):
    reasons = {}
    for kind in ("correct", "wrong"):
        folder = os.path.join(problem_dir, "solutions", kind)
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as f:
                for line in f.read().splitlines()[1:6]:
                    match = re.match(r"#\s*reason:\s*(.+)", line)
                    if match:
                        reasons[f"solutions/{kind}/{name}"] = match.group(1).strip()
    return reasons


def check_reference_alone(checks, result, what):
    """A speedup, from the reference's own job (its wall time recorded), without a warning."""
    warnings = (result.get("sandbox") or {}).get("warnings") or []
    not_timed = [w for w in warnings if "the reference was not timed" in w]
    checks.expect(isinstance(result.get("speedup"), (int, float)) and result["speedup"] > 0
                  and not not_timed, f"{what}: speedup {result.get('speedup')} {not_timed}")
    wall = (result.get("process_times") or {}).get("reference_wall_s")
    checks.expect(isinstance(wall, (int, float)) and wall > 0,
                  f"{what}: the reference's own run took {wall} s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    opts = parser.parse_args()
    problem = os.path.join(opts.root, PROBLEM)
    checks = Checks()

    report, seconds = kj_json(opts.kj, ["problem", "check", problem])
    reasons = declared_reasons(problem)
    for sol in report["solutions"]:
        checks.expect(sol.get("ok", False),
                      f"{sol['file']}: declared {sol['declared']}, got {sol.get('verdict')} "
                      f"- {sol.get('reason', sol.get('error', ''))}")
        if sol["file"] in reasons:
            checks.expect(reasons[sol["file"]] in sol.get("reason", ""),
                          f"{sol['file']}: the reason names '{reasons[sol['file']]}'")
    checks.expect(len(report["solutions"]) >= 7, f"{len(report['solutions'])} declared solutions")
    print(f"     problem check: {seconds:.1f} s")

    correct = os.path.join(problem, "solutions", "correct", "all_reduce.py")
    result, seconds = kj_json(opts.kj, ["eval", problem, correct, "--mode", "benchmark",
                                        "--max-time", "1", "--max-repeats", "30"])
    checks.expect(result["verdict"] == "accepted", f"benchmark mode: {result['verdict']} - "
                  f"{result['reason']} ({seconds:.1f} s)")
    ranks = result.get("ranks", [])
    checks.expect([r["rank"] for r in ranks] == [0, 1] and all(r["device"] == "cpu" for r in ranks),
                  f"benchmark mode: ranks {[(r['rank'], r['device']) for r in ranks]}")
    for i, bench in enumerate(result.get("benchmarks", [])):
        merged = bench["summary"]["median_ns"]
        own = [r["benchmark_medians_ns"][i] for r in ranks]
        checks.expect(merged > 0 and all(merged >= m * (1 - 1e-9) for m in own),
                      f"benchmark {i}: median {merged:.0f} ns >= every rank's own {own}")
        checks.expect(bench["summary"]["n"] >= 1 and bench.get("status") == "pass",
                      f"benchmark {i}: {bench['summary']['n']} samples, {bench.get('status')}")
        reference = bench.get("reference_samples_ns") or []
        checks.expect(0 < len(reference) <= bench["summary"]["n"] and all(ns > 0 for ns in reference),
                      f"benchmark {i}: {len(reference)} reference samples (timed alone, at most "
                      f"the submission's {bench['summary']['n']})")
    check_reference_alone(checks, result, "benchmark mode")

    gather = os.path.join(problem, "solutions", "correct", "all_gather.py")
    result, seconds = kj_json(opts.kj, ["eval", problem, gather, "--mode", "leaderboard",
                                        "--secret-seed", "8675309", "--max-time", "0.5",
                                        "--max-repeats", "10"])
    checks.expect(result["verdict"] == "accepted",
                  f"leaderboard mode: {result['verdict']} - {result['reason']} ({seconds:.1f} s)")
    checks.expect(len(result.get("ranked_tests", [])) == 4 and
                  all(t["status"] == "pass" for t in result["ranked_tests"]),
                  f"leaderboard mode: {len(result.get('ranked_tests', []))} secret tests passed")
    checks.expect(len(result.get("benchmarks", [])) == 2,
                  f"leaderboard mode: {len(result.get('benchmarks', []))} secret benchmarks timed")
    check_reference_alone(checks, result, "leaderboard mode")

    wrong = os.path.join(problem, "solutions", "wrong", "wrong_on_rank1.py")
    result, seconds = kj_json(opts.kj, ["eval", problem, wrong, "--mode", "leaderboard",
                                        "--secret-seed", "8675309", "--max-time", "0.5"])
    checks.expect(result["verdict"] == "wrong_answer" and "rank 1 of 2" in result["reason"],
                  f"leaderboard mode, wrong on rank 1: {result['verdict']} - {result['reason']}")

    print(f"{'FAILED' if checks.failed else 'passed'}: {checks.failed} failure(s)")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
