#!/usr/bin/env python3
"""KernelBench problems through kj: import, judge each with a PyTorch-only ModelNew (the
problem's own Model renamed), and report correctness, speedup against the reference timed in
the same run, and fast_p (the share of problems that are correct and more than p times as fast).
A PyTorch-only ModelNew should come out at speedup ~1: a sanity check of the timing.

  bench/kernelbench.py --kj build/kj --device cuda:0 KernelBench/level1 --first 15
  bench/kernelbench.py --kj build/kj --device cpu tests/kernelbench  (what the CPU test runs)
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

FAST_P = [0.0, 0.5, 0.8, 1.0, 1.2, 1.5, 2.0]


def kernelbench_files(sources, first, only):
    files = []
    for source in sources:
        if os.path.isdir(source):
            names = [n for n in os.listdir(source) if n.endswith(".py")]
            # KernelBench numbers its files (1_..., 2_...): in that order.
            names.sort(key=lambda n: (int(m.group(1)) if (m := re.match(r"(\d+)_", n)) else 1 << 30, n))
            files += [os.path.join(source, n) for n in names]
        else:
            files.append(source)
    files = [f for f in files if re.search(r"^class\s+Model\b", open(f).read(), re.M)
             and re.search(r"^def\s+get_inputs\s*\(", open(f).read(), re.M)]
    if only:
        wanted = set(only.split(","))
        files = [f for f in files if os.path.splitext(os.path.basename(f))[0] in wanted]
    return files[:first] if first else files


def pytorch_solution(source: str) -> str:
    """The problem's own Model, renamed ModelNew: PyTorch only."""
    source = re.sub(r"^class\s+Model\b", "class ModelNew", source, flags=re.M)
    return re.sub(r"super\(\s*Model\s*,", "super(ModelNew,", source)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sources", nargs="+", help="KernelBench .py files or folders (e.g. KernelBench/level1)")
    parser.add_argument("--kj", required=True)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--first", type=int, default=0, help="only the first N problems")
    parser.add_argument("--only", default="", help="comma-separated problem names")
    parser.add_argument("--max-time", type=float, default=5.0, help="seconds of sampling per case")
    parser.add_argument("--work", default="", help="folder for problems and solutions (default: temporary)")
    parser.add_argument("--kj-arg", action="append", default=[],
                        help="extra argument for kj eval (e.g. --kj-arg=--memory-limit=32768)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per problem")
    parser.add_argument("--json", default="", help="write the per-problem results here")
    args = parser.parse_args()

    files = kernelbench_files(args.sources, args.first, args.only)
    if not files:
        sys.exit("no KernelBench files found")
    work = args.work or tempfile.mkdtemp(prefix="kj-kernelbench-")
    problems_dir = os.path.join(work, "problems")
    solutions_dir = os.path.join(work, "solutions")
    os.makedirs(solutions_dir, exist_ok=True)
    imported = subprocess.run([args.kj, "problem", "import-kernelbench", *files, "--out", problems_dir],
                              capture_output=True, text=True)
    if imported.returncode != 0:
        sys.exit(f"import failed ({imported.returncode}): {imported.stderr}")

    rows = []
    for path in files:
        name = os.path.splitext(os.path.basename(path))[0]
        problem = os.path.join(problems_dir, re.sub(r"[^A-Za-z0-9_-]", "_", name).rstrip("_"))
        solution = os.path.join(solutions_dir, os.path.basename(path))
        with open(solution, "w") as f:
            f.write(pytorch_solution(open(path).read()))
        start = time.monotonic()
        try:
            proc = subprocess.run([args.kj, "eval", problem, solution, "--mode", "benchmark", "--json",
                                   "--device", args.device, "--max-time", str(args.max_time),
                                   *args.kj_arg],
                                  capture_output=True, text=True, timeout=args.timeout)
            result = json.loads(proc.stdout)
        except subprocess.TimeoutExpired:
            result = {"verdict": "no_result", "reason": f"kj eval ran past {args.timeout} s"}
        except ValueError:
            result = {"verdict": "no_result", "reason": proc.stderr.strip()[-300:]}
        bench = (result.get("benchmarks") or [{}])[0]
        row = {
            "problem": name,
            "verdict": result.get("verdict"),
            "reason": result.get("reason", ""),
            "correct": result.get("verdict") == "accepted",
            "speedup": result.get("speedup"),
            "median_ns": (bench.get("summary") or {}).get("median_ns"),
            "reference_median_ns": (bench.get("reference_summary") or {}).get("median_ns"),
            "samples": (bench.get("summary") or {}).get("n"),
            "stop_reason": bench.get("stop_reason"),
            "wall_s": round(time.monotonic() - start, 1),
        }
        rows.append(row)
        speed = f"{row['speedup']:.3f}x" if row["speedup"] else "-"
        median = f"{row['median_ns'] / 1e3:.1f} us" if row["median_ns"] else "-"
        print(f"{name:50s} {row['verdict']:15s} {speed:>8s} {median:>12s}  n={row['samples']}"
              f" ({row['wall_s']} s){'' if row['correct'] else '  ' + row['reason'][:120]}", flush=True)

    n = len(rows)
    correct = [r for r in rows if r["correct"] and r["speedup"]]
    summary = {
        "problems": n,
        "correct": len(correct),
        "fast_p": {str(p): sum(1 for r in correct if r["speedup"] > p) / n for p in FAST_P},
        "geomean_speedup": math.exp(sum(math.log(r["speedup"]) for r in correct) / len(correct)) if correct else None,
        "device": args.device,
    }
    print(f"correct {summary['correct']}/{n}; geomean speedup "
          f"{summary['geomean_speedup'] or float('nan'):.3f}; fast_p: " +
          ", ".join(f"fast_{p}={v:.2f}" for p, v in summary["fast_p"].items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "problems": rows}, f, indent=2)
    return 0 if summary["correct"] == n else 1


if __name__ == "__main__":
    sys.exit(main())
