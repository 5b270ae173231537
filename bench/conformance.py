#!/usr/bin/env python3
"""Verdicts against upstream: every gpu-mode/reference-kernels problem that runs on this host's
GPU, judged in test mode by `kj eval` and by the problem's own eval.py, side by side.

For each problem the submissions are
  (a) ref_call: `custom_kernel` calls the problem's own `ref_kernel` (the simplest honest answer);
  (b) every file under the problem's `solutions/` and `submissions/`, and its `submission.py`;
  (c) zeros: the reference's output shape and types, filled with zeros.
Each is judged once per round by kj and by eval.py (laid out as task.yml says, as KernelBot
runs it), with N evaluations at once on one GPU (`--concurrency 1 4`), in shuffled order.
A case agrees when kj accepts exactly when eval.py passes. Problems whose own eval.py fails
their own reference (a) are listed as broken upstream and not counted.

Usage (GPU host; ROOT is a checkout of reference-kernels):
  bench/conformance.py --kj build/kj --python python3 --refk ROOT/problems \
      --concurrency 1 4 --rounds 3 --out /tmp/conformance
`--upstream-rounds 0` judges with kj alone (the table then has no eval.py column to agree
with); `--only eigh_py trimul` keeps those problems.
Writes results.jsonl (one line per evaluation) and table.md under --out; prints the table.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

# Suites, with why the others are left out.
SUITES = ("pmpp_v2", "linalg", "bioml", "helion")
SKIPPED = {
    "amd": "AMD Instinct GPUs (ROCm)",
    "amd_202602": "AMD Instinct GPUs (ROCm)",
    "amd_distributed": "AMD Instinct GPUs (ROCm), several ranks",
    "nvidia": "Blackwell (sm_100) NVFP4 instructions",
    "pmpp": "superseded by pmpp_v2 (no competition file lists it)",
    "princeton": "a contract of its own (cross_entropy_forward/backward and no "
                 "generate_input/ref_kernel/check_implementation), judged only by its eval.py",
}

REF_CALL = '''from reference import ref_kernel


def custom_kernel(data):
    return ref_kernel(data)
'''

ZEROS = '''import torch
from reference import ref_kernel


def _zeros(x):
    if isinstance(x, torch.Tensor):
        return torch.zeros_like(x)
    if isinstance(x, dict):
        return {k: _zeros(v) for k, v in x.items()}
    if type(x).__module__ == "torch.return_types":
        return type(x)([_zeros(v) for v in x])
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return type(x)(*[_zeros(v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_zeros(v) for v in x)
    return x


def custom_kernel(data):
    return _zeros(ref_kernel(data))
'''


def problems(root: str) -> list[str]:
    found = []
    for suite in SUITES:
        base = os.path.join(root, suite)
        for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            if os.path.isfile(os.path.join(base, name, "task.yml")):
                found.append(os.path.join(base, name))
    return found


def submissions(problem: str, scratch: str) -> list[tuple[str, str]]:
    """(label, path) of every submission judged for `problem`."""
    name = os.path.basename(problem)
    own = os.path.join(scratch, name)
    os.makedirs(own, exist_ok=True)
    made = []
    for label, text in (("ref_call", REF_CALL), ("zeros", ZEROS)):
        path = os.path.join(own, label + ".py")
        with open(path, "w") as out:
            out.write(text)
        made.append((label, path))
    files = [os.path.join(problem, "submission.py")]
    for folder in ("solutions", "submissions"):
        for dirpath, _, names in os.walk(os.path.join(problem, folder)):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".py")]
    for path in files:
        if os.path.isfile(path):
            made.append((os.path.relpath(path, problem), path))
    return made


def layout_for_eval(kj: str, problem: str, submission: str, into: str) -> None:
    """The files of task.yml copied as KernelBot lays them out, and tests.txt."""
    shown = json.loads(subprocess.run([kj, "problem", "show", problem], capture_output=True,
                                      text=True, check=True).stdout)
    for f in shown["files"]:
        source = submission if f["source"] == "@SUBMISSION@" else os.path.join(problem, f["source"])
        shutil.copy(source, os.path.join(into, f["name"]))
    with open(os.path.join(into, "tests.txt"), "w") as out:
        for case in shown["tests"]:
            out.write("; ".join(f"{k}: {v}" for k, v in case.items()) + "\n")


def run_upstream(kj: str, python: str, problem: str, submission: str, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        layout_for_eval(kj, problem, submission, tmp)
        if not os.path.isfile(os.path.join(tmp, "eval.py")):
            return {"verdict": "no-eval", "reason": "task.yml lists no eval.py"}
        r, w = os.pipe()
        env = {**os.environ, "POPCORN_FD": str(w)}
        try:
            proc = subprocess.run([python, "eval.py", "test", "tests.txt"], cwd=tmp, env=env,
                                  pass_fds=(w,), capture_output=True, text=True, timeout=timeout)
            os.close(w)
            w = -1
            with os.fdopen(r, "r") as lines:
                log = lines.read()
            r = -1
        except subprocess.TimeoutExpired:
            return {"verdict": "timeout", "reason": f"over {timeout:.0f} s"}
        finally:
            for fd in (r, w):
                if fd >= 0:
                    os.close(fd)
        check = [line.split(":", 1)[1].strip() for line in log.splitlines() if line.startswith("check:")]
        errors = [line for line in log.splitlines() if ".error:" in line or ".status: fail" in line]
        verdict = check[-1] if check else "no-check"
        reason = "; ".join(errors)[:300] or (proc.stderr.strip().splitlines() or [""])[-1][:300]
        return {"verdict": verdict, "reason": reason, "exit": proc.returncode}


def run_kj(kj: str, python: str, device: str, problem: str, submission: str, timeout: float,
           memory_mib: int, extra: list[str]) -> dict:
    cmd = [kj, "eval", problem, submission, "--json", "--mode", "test", "--device", device,
           "--python", python, "--memory-limit", str(memory_mib), *extra]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"verdict": "timeout", "reason": f"over {timeout:.0f} s"}
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        return {"verdict": "no-json", "reason": proc.stderr[-300:]}
    tests = result.get("tests", [])
    return {"verdict": result.get("verdict"), "reason": str(result.get("reason", ""))[:300],
            "gpu_wait_s": result.get("process_times", {}).get("gpu_wait_s"),
            # Where the seconds went: the submission's calls, the checker's, the harness's stages.
            "tests_run_s": round(sum(t.get("seconds", {}).get("run", 0) for t in tests), 3),
            "tests_check_s": round(sum(t.get("seconds", {}).get("check", 0) for t in tests), 3),
            # Per test: the run (of it, the submission's call alone) and the check.
            "tests_s": [[t.get("seconds", {}).get("run"), round(t.get("elapsed_ns", 0) / 1e9, 4),
                         t.get("seconds", {}).get("check")] for t in tests],
            "timeline": {e["event"]: round(e["t_s"], 3) for e in result.get("timeline", [])}}


def upstream_verdicts(rows: list[dict]) -> set[bool]:
    """eval.py's verdicts on one case. A run that ended without a `check:` line counts as a
    rejection only when no run of the case reached its check: a case that eval.py checked in
    one run and crashed on in another (a CUDA error beside other evaluations) has the verdict of
    its checks, and the crash is listed under the table."""
    checked = {passed("eval.py", r["verdict"]) for r in rows if r["verdict"] in ("pass", "fail")}
    return checked or {passed("eval.py", r["verdict"]) for r in rows} - {None}


def passed(judge: str, verdict: str) -> bool | None:
    """Whether the judge accepted; None when it did not get to a verdict."""
    if judge == "kj":
        return None if verdict in ("internal_error", "no-json", "timeout") else verdict == "accepted"
    # eval.py ending without a `check:` line crashed (an import error, a CUDA error): KernelBot
    # shows that run as failed, so it counts as a rejection.
    return {"pass": True, "fail": False, "no-check": False}.get(verdict)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kj")
    parser.add_argument("--refk", help="reference-kernels' problems/ folder")
    parser.add_argument("--python", default="python3", help="interpreter with torch (both judges)")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--upstream-rounds", type=int, default=None,
                        help="rounds in which eval.py runs too (default: every round)")
    parser.add_argument("--judges", nargs="+", choices=["kj", "eval.py"], default=["kj", "eval.py"],
                        help="which judges run (e.g. eval.py alone for its own verdicts)")
    parser.add_argument("--only", nargs="*", default=[], help="problem names to keep")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--memory-limit", type=int, default=32768, help="kj's host memory cap, MiB")
    parser.add_argument("--kj-arg", action="append", default=[],
                        help="one more `kj eval` option, e.g. --kj-arg=--harness=DIR (repeatable)")
    parser.add_argument("--table-from", nargs="+", metavar="RESULTS",
                        help="no runs: the table of results.jsonl files (rounds run in several "
                             "sittings), printed and written to --out/table.md")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.table_from:
        rows = [json.loads(line) for path in args.table_from for line in open(path) if line.strip()]
        seen = sorted(dict.fromkeys((r["problem"], r["submission"]) for r in rows))
        table, disagreements = render(rows, [(p, None, s, None) for p, s in seen])
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "table.md"), "w") as out:
            out.write(table)
        print(table)
        return 1 if disagreements else 0
    upstream_rounds = args.rounds if args.upstream_rounds is None else args.upstream_rounds

    os.makedirs(args.out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="kj-conformance-")
    cases = []
    for problem in problems(args.refk):
        name = os.path.relpath(problem, args.refk)
        if args.only and os.path.basename(problem) not in args.only:
            continue
        cases += [(name, problem, label, path) for label, path in submissions(problem, scratch)]
    for suite, why in SKIPPED.items():
        if os.path.isdir(os.path.join(args.refk, suite)):
            print(f"skipped {suite}: needs {why}" if not why.startswith(("superseded", "a contract"))
                  else f"skipped {suite}: {why}")
    print(f"{len(cases)} cases in {len({c[0] for c in cases})} problems", flush=True)

    # Evaluations already in --out's results.jsonl (an earlier, interrupted sitting) are kept
    # and not run again: a run can be continued by starting it again with the same --out.
    results_path = os.path.join(args.out, "results.jsonl")
    results = []
    if os.path.exists(results_path):
        results = [json.loads(line) for line in open(results_path) if line.strip()]
    done_before = {(r["judge"], r["problem"], r["submission"], r["concurrency"], r["round"])
                   for r in results}
    if done_before:
        print(f"{len(done_before)} evaluations already in {results_path}", flush=True)
    log = open(results_path, "a")
    for level in args.concurrency:
        for round_no in range(1, args.rounds + 1):
            jobs = [("kj", c) for c in cases] if "kj" in args.judges else []
            if round_no <= upstream_rounds and "eval.py" in args.judges:
                jobs += [("eval.py", c) for c in cases]
            jobs = [j for j in jobs if (j[0], j[1][0], j[1][2], level, round_no) not in done_before]
            random.shuffle(jobs)
            began = time.monotonic()

            def judge(job):
                who, (name, problem, label, path) = job
                start = time.monotonic()
                if who == "kj":
                    got = run_kj(args.kj, args.python, args.device, problem, path, args.timeout,
                                 args.memory_limit, args.kj_arg)
                else:
                    got = run_upstream(args.kj, args.python, problem, path, args.timeout)
                return {"judge": who, "problem": name, "submission": label, "concurrency": level,
                        "round": round_no, "seconds": round(time.monotonic() - start, 1), **got}

            with concurrent.futures.ThreadPoolExecutor(level) as pool:
                for done in concurrent.futures.as_completed([pool.submit(judge, j) for j in jobs]):
                    row = done.result()
                    results.append(row)
                    log.write(json.dumps(row) + "\n")
                    log.flush()
            print(f"concurrency {level}, round {round_no}: {len(jobs)} evaluations in "
                  f"{time.monotonic() - began:.0f} s", flush=True)
    log.close()
    table, disagreements = render(results, cases)
    with open(os.path.join(args.out, "table.md"), "w") as out:
        out.write(table)
    print(table)
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if disagreements else 0


def render(results: list[dict], cases: list) -> tuple[str, int]:
    """The table: per case eval.py's verdicts, kj's per concurrency level, and agreement."""
    by_case: dict = {}
    for row in results:
        by_case.setdefault((row["problem"], row["submission"]), []).append(row)
    broken = set()
    for (problem, label), rows in by_case.items():
        upstream = upstream_verdicts([r for r in rows if r["judge"] == "eval.py"])
        if label == "ref_call" and upstream == {False}:
            broken.add(problem)
    levels = sorted({r["concurrency"] for r in results})
    lines = ["| problem | submission | eval.py | " + " | ".join(f"kj at {n}" for n in levels) +
             " | agree |", "|---|---|---|" + "---|" * len(levels) + "---|"]
    counted = agreeing = disagreements = 0
    flaky: list[str] = []
    for name, _, label, _ in cases:
        rows = by_case.get((name, label), [])
        upstream = [r for r in rows if r["judge"] == "eval.py"]
        want = upstream_verdicts(upstream)
        if any(r["verdict"] == "no-check" for r in upstream) and \
                any(r["verdict"] in ("pass", "fail") for r in upstream):
            flaky.append(f"{name} {label}")
        cells = []
        ok = True
        for level in levels:
            ours = [r for r in rows if r["judge"] == "kj" and r["concurrency"] == level]
            got = [passed("kj", r["verdict"]) for r in ours]
            cells.append(", ".join(sorted({r["verdict"] for r in ours}, key=str)) + f" ({len(ours)})")
            if len(want) != 1 or any(g is None or g != next(iter(want)) for g in got):
                ok = False
        eval_cell = ", ".join(sorted({r["verdict"] for r in upstream}, key=str)) + f" ({len(upstream)})"
        if name in broken:
            verdict = "broken upstream"
        else:
            counted += len([r for r in rows if r["judge"] == "kj"])
            agreeing += len([r for r in rows if r["judge"] == "kj"]) if ok else 0
            disagreements += not ok
            verdict = "yes" if ok else "**no**"
        lines.append(f"| {name} | {label} | {eval_cell} | " + " | ".join(cells) + f" | {verdict} |")
    notes = {}
    for row in results:
        if row["judge"] == "kj" and row["verdict"] != "accepted":
            notes.setdefault((row["problem"], row["submission"], row["verdict"]), row["reason"])
    lines.append("")
    lines.append(f"{agreeing} of {counted} kj evaluations agree with eval.py; "
                 f"{disagreements} cases disagree; broken upstream: {', '.join(sorted(broken)) or 'none'}.")
    if flaky:
        lines.append("")
        lines.append("eval.py crashed in some runs and reached its check in others (its checks are "
                     "its verdict): " + "; ".join(flaky) + ".")
    lines.append("")
    lines.append("kj's reasons for what it rejected (first seen):")
    for (problem, label, verdict), reason in sorted(notes.items()):
        lines.append(f"- {problem} {label}: {verdict}: {reason}")
    return "\n".join(lines) + "\n", disagreements


if __name__ == "__main__":
    sys.exit(main())
