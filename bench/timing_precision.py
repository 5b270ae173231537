#!/usr/bin/env python3
"""Timing precision on a GPU: kj's leaderboard runs against reference-kernels' own eval.py on the
same kernel, and kj compare on a known ~2 % difference and on identical kernels.

Usage (on a GPU host, from the repository root):
  bench/timing_precision.py --kj build/kj --problem PMPP/vectoradd_py \
      --fast bench/kernels/vectoradd_pmpp_triton.py --slow bench/kernels/vectoradd_pmpp_triton_slower.py \
      [--runs 5] [--trials 20] [--compare-case 3] [--no-kernelbot] --out results.json

Prints a markdown table (for docs/perf.md) and writes every figure to --out.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def kj_json(args, cmd):
    start = time.monotonic()
    proc = subprocess.run([args.kj, *cmd, "--json", "--device", args.device, "--python", args.python,
                           *args.kj_arg],
                          capture_output=True, text=True)
    wall = time.monotonic() - start
    try:
        return json.loads(proc.stdout), wall
    except ValueError:
        sys.exit(f"kj {' '.join(cmd)} printed no JSON (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def our_runs(args):
    runs = []
    for r in range(args.runs):
        result, wall = kj_json(args, ["eval", args.problem, args.fast, "--mode", "leaderboard", "--no-reference"])
        if result["verdict"] != "accepted":
            sys.exit(f"run {r}: {result['verdict']}: {result['reason']}")
        runs.append({"wall_s": wall, "benchmarks": [
            {"spec": b["spec"], "median_ns": b["summary"]["median_ns"], "n": b["summary"]["n"],
             "cv": b["summary"]["stdev_ns"] / b["summary"]["mean_ns"], "method": b["method"],
             "iqr_rel": b["summary"]["iqr_ns"] / b["summary"]["median_ns"],
             "other_stream_samples": b.get("other_stream_samples", 0),
             "stop_reason": b["stop_reason"], "seconds": b.get("seconds"),
             "recheck_path": b.get("recheck_path")} for b in result["benchmarks"]],
                     "timeline": result.get("timeline", [])})
        print(f"kj run {r}: {wall:.1f} s, medians (µs) "
              + " ".join(f"{b['median_ns'] / 1e3:.2f}" for b in runs[-1]["benchmarks"]), flush=True)
    return runs


def kernelbot_runs(args, shown):
    """reference-kernels' eval.py, leaderboard mode, in a directory laid out as its task.yml says."""
    runs = []
    for r in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            for f in shown["files"]:
                src = args.fast if f["source"] == "@SUBMISSION@" else os.path.join(args.problem, f["source"])
                shutil.copy(src, os.path.join(tmp, f["name"]))
            with open(os.path.join(tmp, "tests.txt"), "w") as f:
                for b in shown["benchmarks"]:
                    f.write("; ".join(f"{k}: {v}" for k, v in b.items()) + "\n")
            read, write = os.pipe()
            start = time.monotonic()
            proc = subprocess.Popen([args.python, "eval.py", "leaderboard", "tests.txt"], cwd=tmp,
                                    env={**os.environ, "POPCORN_FD": str(write)}, pass_fds=(write,),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            os.close(write)
            with os.fdopen(read) as out:
                log = out.read()
            proc.wait()
            wall = time.monotonic() - start
        fields = dict(line.split(": ", 1) for line in log.splitlines() if ": " in line)
        means = [float(fields[f"benchmark.{i}.mean"]) for i in range(len(shown["benchmarks"]))]
        runs.append({"wall_s": wall, "means_ns": means, "check": fields.get("check")})
        print(f"eval.py run {r}: {wall:.1f} s, means (µs) " + " ".join(f"{m / 1e3:.2f}" for m in means), flush=True)
    return runs


def compare_trials(args, a, b):
    result, wall = kj_json(args, ["compare", args.problem, a, b, "--case", str(args.compare_case),
                                  "--trials", str(args.trials)])
    if result["verdict"] != "accepted":
        sys.exit(f"compare: {result['verdict']}: {result['reason']}")
    outcomes = [c["outcome"] for c in result["comparisons"]]
    ratios = [c["ratio"] for c in result["comparisons"]]
    return {"wall_s": wall, "outcomes": {o: outcomes.count(o) for o in set(outcomes)},
            "median_ratio": statistics.median(ratios), "texts": [c["text"] for c in result["comparisons"]]}


def spread(values):
    return (max(values) - min(values)) / min(values)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--python", default="python3")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--problem", required=True)
    parser.add_argument("--fast", required=True)
    parser.add_argument("--slow", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--compare-case", type=int, default=3)
    parser.add_argument("--no-kernelbot", action="store_true")
    parser.add_argument("--no-compare", action="store_true", help="skip the kj compare trials")
    parser.add_argument("--out", required=True)
    parser.add_argument("--kj-arg", action="append", default=[], help="extra argument for kj eval/compare")
    args = parser.parse_args()
    shown = json.loads(subprocess.run([args.kj, "problem", "show", args.problem], capture_output=True,
                                      text=True, check=True).stdout)
    report = {"ours": our_runs(args)}
    if not args.no_kernelbot:
        report["kernelbot"] = kernelbot_runs(args, shown)
    if not args.no_compare:
        report["compare_slower"] = compare_trials(args, args.fast, args.slow)
        report["compare_identical"] = compare_trials(args, args.fast, args.fast)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)

    print("\n| size | kj median (µs) | kj per-sample CV | kj IQR / median | kj spread of medians | "
          "eval.py mean (µs) | eval.py spread of means |")
    print("|---|---|---|---|---|---|---|")
    for i, spec in enumerate(shown["benchmarks"]):
        medians = [r["benchmarks"][i]["median_ns"] for r in report["ours"]]
        cvs = [r["benchmarks"][i]["cv"] for r in report["ours"]]
        iqrs = [r["benchmarks"][i]["iqr_rel"] for r in report["ours"]]
        kb = [r["means_ns"][i] for r in report.get("kernelbot", [])]
        print(f"| {spec} | {statistics.median(medians) / 1e3:.2f} | {statistics.median(cvs) * 100:.2f} % "
              f"| {statistics.median(iqrs) * 100:.2f} % | {spread(medians) * 100:.2f} % | "
              + (f"{statistics.median(kb) / 1e3:.2f} | {spread(kb) * 100:.1f} % |" if kb else "– | – |"))
    ours_wall = statistics.mean(r["wall_s"] for r in report["ours"])
    print(f"\nwall per leaderboard run: kj {ours_wall:.1f} s"
          + (f", eval.py {statistics.mean(r['wall_s'] for r in report['kernelbot']):.1f} s" if "kernelbot" in report else ""))
    for key in ("compare_slower", "compare_identical"):
        if key not in report:
            continue
        c = report[key]
        print(f"{key}: {c['outcomes']} over {args.trials} trials, median ratio {c['median_ratio']:.4f}")


if __name__ == "__main__":
    main()
