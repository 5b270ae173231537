#!/usr/bin/env python3
"""Leaderboard runs per hour through the judge server (docs/perf.md): `kj serve` on a fresh
SQLite store with one worker on the given device, N leaderboard-mode submissions of one file
POSTed at once, then the time from the first POST to the last result. Each run is a full
leaderboard run in a sandbox and interpreter of its own (public tests, public shapes, ranked
tests, timing on secret inputs, re-checks), which is what a queue of submissions sees. A GPU
worker starts the next run's harness as each job begins, or with `--serve-arg=--no-warm-ahead`
only after it ends.

  bench/leaderboard_throughput.py --kj build/kj --problems PROBLEMS_DIR --leaderboard vectoradd_py \\
      --submission bench/kernels/vectoradd_pmpp_triton.py --runs 6 [--device cuda:0] [--json OUT]

PROBLEMS_DIR is copied (a folder of problem folders, e.g. reference-kernels' problems/pmpp_v2).
Prints per-run figures from the store (claim to completion, sandbox wall, the harness's own
times), each size's median of the runs' medians and their spread, and the throughput: runs per
hour and seconds per run. `--eval-py-runs N` then times N runs of the problem's own eval.py
(leaderboard mode, laid out as its task.yml says) one after another in the same sitting.
"""

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_load import Serve, call, load  # noqa: E402
from timing_precision import kernelbot_runs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FINAL = {"done", "failed"}


def wait_all(server, ids, timeout):
    pending = set(ids)
    deadline = time.monotonic() + timeout
    finished = {}
    while pending and time.monotonic() < deadline:
        for sid in sorted(pending):
            status, data = call(f"{server.url}/api/submissions/{sid}", token=server.token)
            if status != 200:
                continue
            sub = json.loads(data)
            if sub.get("status") in FINAL:
                finished[sid] = (time.monotonic(), sub)
        pending -= set(finished)
        time.sleep(0.25)
    if pending:
        sys.exit(f"{len(pending)} of {len(ids)} submissions not finished after {timeout} s")
    return finished


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kj", required=True)
    parser.add_argument("--problems", required=True, help="a folder of problem folders")
    parser.add_argument("--leaderboard", required=True)
    parser.add_argument("--submission", required=True)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--device", default="cuda:0", help="cuda:N, or cpu (a CPU worker)")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--serve-arg", action="append", default=[],
                        help="extra argument for kj serve (e.g. --serve-arg=--max-time=2)")
    parser.add_argument("--json", help="write the per-run figures here")
    parser.add_argument("--eval-py-runs", type=int, default=0,
                        help="then time this many runs of the problem's own eval.py")
    parser.add_argument("--python", default="python3", help="the interpreter for eval.py")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="kj-bench-throughput-")
    try:
        problems = os.path.join(tmp, "problems")
        shutil.copytree(args.problems, problems)
        env = dict(os.environ, HOME=tmp, KJ_HARNESS_DIR=os.path.join(ROOT, "harness"))
        env.pop("KJ_SERVER", None)
        env.pop("KJ_TOKEN", None)
        if args.device.startswith("cuda"):
            env["CUDA_VISIBLE_DEVICES"] = args.device.split(":", 1)[1]
        db = os.path.join(tmp, "kj.db")
        extra = list(args.serve_arg) + (["--no-gpu"] if args.device == "cpu" else [])
        server = Serve(args.kj, db, problems, extra, env)
        code = open(args.submission).read()
        before = load()
        try:
            time.sleep(5)  # the worker's first harness starts as a server's would have it
            started = time.monotonic()
            ids = []
            for _ in range(args.runs):
                status, data = call(server.url + "/api/submissions", "POST", server.token,
                                    {"leaderboard": args.leaderboard, "code": code,
                                     "mode": "leaderboard"})
                if status != 201:
                    sys.exit(f"POST refused ({status}): {data[:500]!r}")
                ids.append(json.loads(data)["id"])
            finished = wait_all(server, ids, args.timeout)
            span = max(t for t, _ in finished.values()) - started
        finally:
            server.stop()
        con = sqlite3.connect(db)
        rows = []
        for sid in ids:
            job = con.execute("SELECT id FROM jobs WHERE submission_id = ?", (sid,)).fetchone()
            times = {}
            for t, event_json in con.execute(
                    "SELECT time, event_json FROM job_events WHERE job_id = ? ORDER BY seq", job):
                e = json.loads(event_json)
                times.setdefault(e["event"] + (" " + e["state"] if "state" in e else ""), t / 1e6)
            result = json.loads(con.execute(
                "SELECT result_json FROM runs WHERE submission_id = ? ORDER BY id DESC",
                (sid,)).fetchone()[0])
            marks = {m["event"]: m["t_s"] for m in result.get("timeline", [])}
            rows.append({
                "submission": sid,
                "verdict": result.get("verdict"),
                "claim_to_finish_s": times.get("stage finished", 0) - times.get("claimed", 0),
                "sandbox_wall_s": result["sandbox"]["wall_ns"] / 1e9,
                "harness_done_s": marks.get("done"),
                "process_times": result.get("process_times", {}),
                "stop_reasons": [b.get("stop_reason") for b in result.get("benchmarks", [])],
                "medians_ns": [(b.get("summary") or {}).get("median_ns")
                               for b in result.get("benchmarks", [])],
                "timeline": result.get("timeline", []),
                "case_seconds": [b.get("seconds") for b in result.get("benchmarks", [])],
                "samples": [len(b.get("samples_ns") or []) for b in result.get("benchmarks", [])],
                "recheck_path": sorted({b.get("recheck_path") for b in result.get("benchmarks", [])
                                        if b.get("recheck_path")}),
            })
        verdicts = sorted({r["verdict"] for r in rows})
        per_run = span / args.runs
        print(f"{args.runs} leaderboard runs of {os.path.basename(args.submission)} on "
              f"{args.leaderboard}, {args.device}: {span:.1f} s from the first POST to the last "
              f"result, {per_run:.2f} s per run, {3600 / per_run:.0f} runs per hour; "
              f"verdicts {verdicts}; load average before {before}, after {load()}")
        for r in rows:
            print(f"  #{r['submission']}: claim to finish {r['claim_to_finish_s']:.2f} s, sandbox "
                  f"{r['sandbox_wall_s']:.2f} s, harness done at {r['harness_done_s']} s, "
                  f"process {json.dumps(r['process_times'])}, re-checks {r['recheck_path']}")
        # The worker busy without a break: from the first run's result to the last one's.
        steady = ((max(t for t, _ in finished.values()) - finished[ids[0]][0]) / (args.runs - 1)
                  if args.runs > 1 else None)
        if steady is not None:
            print(f"  after the first run (compiled, reference timed): {steady:.2f} s per run, "
                  f"{3600 / steady:.0f} runs per hour")
        print("  median claim to finish: "
              f"{statistics.median(r['claim_to_finish_s'] for r in rows):.2f} s")
        sizes = len(rows[0]["medians_ns"])
        for i in range(sizes):
            medians = [r["medians_ns"][i] for r in rows if r["medians_ns"][i]]
            if medians:
                print(f"  size {i}: median of medians {statistics.median(medians) / 1e3:.3f} µs, "
                      f"spread {(max(medians) - min(medians)) / min(medians) * 100:.2f} %, range "
                      f"{min(medians) / 1e3:.3f}-{max(medians) / 1e3:.3f} µs over {len(medians)} runs")
        evalpy = []
        if args.eval_py_runs > 0:
            shown = json.loads(subprocess.run(
                [args.kj, "problem", "show", os.path.join(problems, args.leaderboard)],
                capture_output=True, text=True, check=True).stdout)
            evalpy = kernelbot_runs(argparse.Namespace(
                runs=args.eval_py_runs, fast=args.submission, python=args.python,
                problem=os.path.join(problems, args.leaderboard)), shown)
            walls = [r["wall_s"] for r in evalpy]
            print(f"eval.py: {len(walls)} leaderboard runs, {statistics.median(walls):.2f} s per "
                  f"run (median; {min(walls):.2f}-{max(walls):.2f}), "
                  f"{3600 / statistics.median(walls):.0f} runs per hour")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"span_s": span, "runs": args.runs, "per_run_s": per_run,
                           "per_run_after_first_s": steady,
                           "rows": rows, "eval_py": evalpy}, f, indent=1)
        if verdicts != ["accepted"]:
            sys.exit(f"not every run was accepted: {verdicts}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
