#!/usr/bin/env python3
"""KernelBench problems through kj on the CPU: import (and refusal of a file that is not one),
PyTorch-only ModelNew solutions accepted with speedup ~1 and fast_p reported by
bench/kernelbench.py, a ModelNew beyond atol = rtol = 1e-2 rejected, seeded weights shared.

  kernelbench_test.py --kj build/kj --root .
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    here = os.path.join(args.root, "tests", "kernelbench")
    work = tempfile.mkdtemp(prefix="kj-kb-test-")
    problems = os.path.join(work, "problems")

    bad = subprocess.run([args.kj, "problem", "import-kernelbench", os.path.join(here, "not_kernelbench.py"),
                          "--out", problems], capture_output=True, text=True)
    check(bad.returncode == 2 and "not a KernelBench problem" in bad.stderr
          and "get_inputs" in bad.stderr, f"a file without get_inputs is refused: {bad.stderr.strip()}")

    # Both problems, judged with their own Model as ModelNew: correct, speedup ~1.
    report = os.path.join(work, "report.json")
    bench = subprocess.run([sys.executable, os.path.join(args.root, "bench", "kernelbench.py"), "--kj", args.kj,
                            "--device", "cpu", "--max-time", "1", "--work", work, "--json", report,
                            os.path.join(here, "relu_small.py"), os.path.join(here, "linear_gelu.py")],
                           capture_output=True, text=True)
    print(bench.stdout + bench.stderr)
    check(bench.returncode == 0, "bench/kernelbench.py: every PyTorch-only ModelNew accepted")
    if os.path.exists(report):
        data = json.load(open(report))
        summary = data["summary"]
        check(summary["problems"] == 2 and summary["correct"] == 2, "2 of 2 correct")
        # On a loaded 2-core CPU a ~0.5 ms kernel's medians move by 2x between processes (0.85x
        # and 1.30x in two runs of the same pair); the H200 run is where speedup ~1 is measured
        # (docs/cuda-problems.md). Here: a ratio of the same order, and fast_p computed from them.
        for row in data["problems"]:
            s = row["speedup"] or 0
            check(0.2 < s < 5, f"{row['problem']}: PyTorch-only speedup {s:.3f} is of order 1")
        check(summary["fast_p"]["0.0"] == 1.0, "fast_0 = 1 (all correct)")
        for p in ("0.8", "1.0", "2.0"):
            share = sum(1 for row in data["problems"] if row["speedup"] > float(p)) / len(data["problems"])
            check(summary["fast_p"][p] == share, f"fast_{p} = {summary['fast_p'][p]} is the share above {p}x")

    def judge(problem, solution):
        proc = subprocess.run([args.kj, "eval", os.path.join(problems, problem), solution, "--json"],
                              capture_output=True, text=True)
        return json.loads(proc.stdout)

    wrong = judge("relu_small", os.path.join(here, "solutions", "relu_small_wrong.py"))
    check(wrong["verdict"] == "wrong_answer" and "atol = rtol = 0.01" in wrong["reason"],
          f"a ReLU leaking 5 % of negatives is wrong_answer: {wrong['reason']}")
    tanh = judge("linear_gelu", os.path.join(here, "solutions", "linear_gelu_tanh.py"))
    check(tanh["verdict"] == "accepted",
          f"ModelNew with its own nn.Linear gets the reference's weights (seeded): {tanh['reason']}")
    print(f"{len(failures) == 0 and 'all passed' or str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
