#!/usr/bin/env python3
"""Load figures for `kj serve` on SQLite (docs/perf.md, "Server"). Each part starts its own
`kj serve` on a temporary database with a copy of problems/vectoradd and stops it afterwards.

Needs `wrk` (`apt-get install wrk`) for the read part, and the seeding tool:
  cmake --build BUILD --target kj kj_seed_store
  export KJ_PYTHON=...   # the harness interpreter, for the latency part
  bench/server_load.py --kj BUILD/kj --seeder BUILD/kj_seed_store [--parts read,burst,latency]

Parts:
  read     the store seeded with --submissions ranked leaderboard submissions by --users users
           (bench/seed_store.cpp), `kj serve --no-workers`, then wrk on the ranking (API, plain
           and with Accept-Encoding: gzip as browsers and HTTP libraries send it, and, when the
           server has it, the HTML page /leaderboards/vectoradd) and on one submission.
  burst    --burst test-mode submissions POSTed by --burst-threads threads as the admin (exempt
           from the rate limit) to `kj serve --no-workers`: accepted per second, POST latency
           percentiles, and the count in the store afterwards.
  latency  --latency-runs test-mode submissions of one file (--latency-solution, a path under
           problems/: vectoradd's correct pytorch solution unless told), one at a time, to
           `kj serve --no-gpu` with its CPU worker (`--gpu`: its GPU worker): POST to the final
           SSE event, and where the time went from the store's job events, the run's sandbox
           wall time and the harness timeline; how many runs the compile cache served (the
           same file resubmitted by the same user: its Triton kernels are not compiled again).
"""

import argparse
import collections
import concurrent.futures
import json
import os
import queue
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOARD = "vectoradd"


class Serve:
    """A `kj serve` process on port 0; the URL and, on first start, the admin token come from its
    stdout, read on a thread."""

    def __init__(self, kj, db, problems, extra, env):
        self.proc = subprocess.Popen(
            [kj, "serve", "--db", "sqlite:" + db, "--problems", problems, "--port", "0",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.url = self.token = None
        while self.url is None:
            line = self.lines.get(timeout=60)
            if line is None:
                raise RuntimeError("kj serve exited")
            if "listening on" in line:
                self.url = line.split("listening on ")[1].split()[0]
        try:
            line = self.lines.get(timeout=2)
            if line and "admin token" in line:
                self.token = line.split()[-1]
        except queue.Empty:
            pass

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)


def call(url, method="GET", token=None, body=None, timeout=120):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def workspace(tmp, board=BOARD):
    """A copy of problems/BOARD (and of `board`, which may take its files from BOARD's)."""
    problems = os.path.join(tmp, "problems")
    os.makedirs(problems)
    for name in sorted({BOARD, board}):
        shutil.copytree(os.path.join(ROOT, "problems", name), os.path.join(problems, name))
    shutil.copy(os.path.join(ROOT, "problems", "utils.py"), problems)
    env = dict(os.environ, HOME=tmp, KJ_HARNESS_DIR=os.path.join(ROOT, "harness"))
    env.pop("KJ_SERVER", None)
    env.pop("KJ_TOKEN", None)
    return problems, env


def wrk(args, url, token=None, headers=()):
    command = ["wrk", "-t", str(args.wrk_threads), "-c", str(args.wrk_connections), "-d",
               f"{args.wrk_seconds}s", "--latency"]
    if token:
        command += ["-H", "Authorization: Bearer " + token]
    for header in headers:
        command += ["-H", header]
    command.append(url)
    before = load()
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.M))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    print(f"  {' '.join(command[:-1]).replace(token or '@@', 'TOKEN')} URL")
    print(f"  {rps:,.0f} req/s, p50 {lat.get('50')}, p99 {lat.get('99')}, non-2xx "
          f"{errors.group(1) if errors else 0}; load average before: {before}, after: {load()}")


def part_read(args):
    tmp = tempfile.mkdtemp(prefix="kj-bench-read-")
    try:
        problems, env = workspace(tmp)
        db = os.path.join(tmp, "kj.db")
        server = Serve(args.kj, db, problems, ["--no-workers"], env)
        token = server.token
        server.stop()
        started = time.monotonic()
        subprocess.run([args.seeder, "sqlite:" + db, BOARD, "cpu", str(args.users),
                        str(args.submissions)], check=True)
        print(f"read: seeded {args.users} users, {args.submissions} ranked submissions in "
              f"{time.monotonic() - started:.1f} s")
        server = Serve(args.kj, db, problems, ["--no-workers"], env)
        try:
            ranking = f"{server.url}/api/leaderboards/{BOARD}/ranking?gpu=cpu"
            for attempt in ("first (query)", "second (cached)"):
                started = time.monotonic()
                status, body = call(ranking)
                assert status == 200, body[:300]
                rows = len(json.loads(body)["ranking"])
                print(f"  ranking {attempt}: {1000 * (time.monotonic() - started):.1f} ms, "
                      f"{rows} rows, {len(body):,} bytes")
            print(f"GET /api/leaderboards/{BOARD}/ranking?gpu=cpu")
            wrk(args, ranking)
            request = urllib.request.Request(ranking, headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(request, timeout=60) as response:
                encoding = response.headers.get("Content-Encoding")
                size = len(response.read())
            print(f"GET /api/leaderboards/{BOARD}/ranking?gpu=cpu, Accept-Encoding: gzip "
                  f"(Content-Encoding: {encoding}, {size:,} bytes)")
            wrk(args, ranking, headers=["Accept-Encoding: gzip"])
            status, body = call(f"{server.url}/leaderboards/{BOARD}")
            if status == 200:
                print(f"GET /leaderboards/{BOARD} (HTML, {len(body):,} bytes)")
                wrk(args, f"{server.url}/leaderboards/{BOARD}")
                print(f"GET /leaderboards/{BOARD} (HTML), Accept-Encoding: gzip")
                wrk(args, f"{server.url}/leaderboards/{BOARD}", headers=["Accept-Encoding: gzip"])
            else:
                print(f"GET /leaderboards/{BOARD}: HTTP {status}, no HTML page; skipped")
            submission = args.submissions // 2
            status, body = call(f"{server.url}/api/submissions/{submission}", token=token)
            assert status == 200, body[:300]
            print(f"GET /api/submissions/{submission} (admin token, {len(body):,} bytes)")
            wrk(args, f"{server.url}/api/submissions/{submission}", token)
        finally:
            server.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def part_burst(args):
    tmp = tempfile.mkdtemp(prefix="kj-bench-burst-")
    try:
        problems, env = workspace(tmp)
        db = os.path.join(tmp, "kj.db")
        server = Serve(args.kj, db, problems, ["--no-workers"], env)
        code = open(os.path.join(ROOT, "problems", BOARD, "solutions", "correct",
                                 "pytorch.py")).read()
        body = {"leaderboard": BOARD, "code": code, "mode": "test"}
        try:
            def submit(_):
                started = time.monotonic()
                status, data = call(server.url + "/api/submissions", "POST", server.token, body)
                return status, time.monotonic() - started

            before = load()
            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(args.burst_threads) as pool:
                results = list(pool.map(submit, range(args.burst)))
            wall = time.monotonic() - started
        finally:
            server.stop()
        accepted = [t for status, t in results if status == 201]
        with sqlite3.connect(db) as con:
            stored = con.execute("SELECT count(*) FROM submissions").fetchone()[0]
            jobs = con.execute("SELECT count(*) FROM jobs WHERE state = 'queued'").fetchone()[0]
        print(f"burst: {args.burst} POST /api/submissions by {args.burst_threads} threads: "
              f"{len(accepted)} 201 in {wall:.2f} s = {len(accepted) / wall:,.0f} accepted/s; "
              f"POST latency p50 {1000 * percentile(accepted, 50):.1f} ms, "
              f"p99 {1000 * percentile(accepted, 99):.1f} ms, max {1000 * max(accepted):.1f} ms; "
              f"in the store afterwards: {stored} submissions, {jobs} queued jobs; "
              f"other statuses: {sorted(set(s for s, _ in results if s != 201))}; "
              f"load average before: {before}, after: {load()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def follow(url, token):
    """Reads the SSE stream to its result event; returns the monotonic time it arrived."""
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=300) as response:
        for line in response:
            if line.startswith(b"event: result"):
                return time.monotonic()
    raise RuntimeError("the event stream ended without a result")


def part_latency(args):
    tmp = tempfile.mkdtemp(prefix="kj-bench-latency-")
    try:
        board = args.latency_solution.split("/")[0]
        problems, env = workspace(tmp, board)
        db = os.path.join(tmp, "kj.db")
        server = Serve(args.kj, db, problems, ["--max-time", "0.2", "--max-repeats", "10"]
                       + ([] if args.gpu else ["--no-gpu"]) + args.serve_arg, env)
        code = open(os.path.join(ROOT, "problems", args.latency_solution)).read()
        rows = []
        try:
            for _ in range(args.latency_runs + 1):  # the first one warms the page cache
                # An idle server's worker has the next harness started; a gap gives it the time.
                time.sleep(args.latency_gap)
                before = load()
                posted = time.monotonic()
                posted_wall = time.time()
                status, data = call(server.url + "/api/submissions", "POST", server.token,
                                    {"leaderboard": board, "code": code, "mode": "test"})
                assert status == 201, data[:300]
                sid = json.loads(data)["id"]
                final = follow(f"{server.url}/api/submissions/{sid}/events", server.token)
                rows.append((sid, final - posted, posted_wall, before))
        finally:
            server.stop()
        con = sqlite3.connect(db)
        table = []
        warnings = collections.Counter()
        cache_hits = 0
        all_marks, marks_seen = [], []
        for sid, total, posted_wall, before in rows[1:]:
            created = con.execute("SELECT created_at FROM submissions WHERE id = ?",
                                  (sid,)).fetchone()[0] / 1e6
            job_id, done = con.execute("SELECT id, updated_at FROM jobs WHERE submission_id = ?",
                                       (sid,)).fetchone()
            events = {}
            for t, event_json in con.execute(
                    "SELECT time, event_json FROM job_events WHERE job_id = ? ORDER BY seq",
                    (job_id,)):
                e = json.loads(event_json)
                key = e["event"] + (" " + e["state"] if "state" in e else "")
                events.setdefault(key, t / 1e6)
            result = json.loads(con.execute(
                "SELECT result_json FROM runs WHERE submission_id = ?", (sid,)).fetchone()[0])
            wall = result["sandbox"]["wall_ns"] / 1e9
            warnings.update(result["sandbox"].get("warnings", []))
            cache_hits += (result.get("compile_cache") or {}).get("restored", 0) > 0
            marks = {m["event"]: m["t_s"] for m in result.get("timeline", [])}
            all_marks.append(marks)
            marks_seen.extend(name for name in marks if name not in marks_seen)
            done_t = marks.get("done", 0.0)
            imports = marks.get("stage load_reference", 0.0)
            tests = done_t - marks.get("stage tests public", done_t)
            evaluate = events["stage finished"] - events["stage started"]
            table.append({
                "total": total,
                "post": created - posted_wall,
                "queue": events["claimed"] - created,
                "claimed_to_evaluate": events["stage started"] - events["claimed"],
                "evaluate": evaluate,
                "sandbox_wall": wall,
                "outside_harness": wall - done_t,
                "imports": imports,
                "load_code": marks.get("stage tests public", done_t) - imports,
                "tests": tests,
                "judge_not_sandbox": evaluate - wall,
                "complete": done / 1e6 - events["stage finished"],
                "to_client": total - (done / 1e6 - posted_wall),
                "load_before": before,
            })
        keys = [k for k in table[0] if k != "load_before"]
        print(f"latency: {len(table)} test-mode submissions of {args.latency_solution} on "
              f"the {'GPU' if args.gpu else 'CPU'} worker, one at a time, {args.latency_gap:g} s apart "
              f"(seconds; median, min, max)")
        for k in keys:
            values = [row[k] for row in table]
            print(f"  {k:22s} {statistics.median(values):8.3f} {min(values):8.3f} "
                  f"{max(values):8.3f}")
        # The harness's timeline, each mark's median over the runs: where the tests' time goes.
        print("  harness timeline (median seconds from the job's arrival, each mark over the runs):")
        for name in marks_seen:
            values = [m[name] for m in all_marks if name in m]
            print(f"    {name:28s} {statistics.median(values):8.4f}  ({len(values)} runs)")
        print(f"  load average before each: {[row['load_before'] for row in table]}")
        print(f"  runs given compiled kernels by the compile cache: {cache_hits} of {len(table)}")
        # A degraded run (a CPU worker's zygote passed over, say) shows here.
        for text, count in warnings.most_common():
            print(f"  sandbox warning in {count} of {len(table)} runs: {text}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--seeder", help="kj_seed_store (read part)")
    parser.add_argument("--parts", default="read,burst,latency")
    parser.add_argument("--gpu", action="store_true",
                        help="latency part: judge on this host's GPU worker instead of the CPU")
    parser.add_argument("--latency-gap", type=float, default=0.0,
                        help="seconds between latency submissions (idle time before each)")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--submissions", type=int, default=10000)
    parser.add_argument("--wrk-threads", type=int, default=2)
    parser.add_argument("--wrk-connections", type=int, default=32)
    parser.add_argument("--wrk-seconds", type=int, default=10)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--burst-threads", type=int, default=32)
    parser.add_argument("--latency-runs", type=int, default=20)
    parser.add_argument("--latency-solution", default=f"{BOARD}/solutions/correct/pytorch.py",
                        help="latency part: the file submitted, a path under problems/")
    parser.add_argument("--serve-arg", action="append", default=[],
                        help="latency part: extra argument for kj serve (e.g. --serve-arg=--no-zygote)")
    args = parser.parse_args()
    parts = args.parts.split(",")
    print(f"cores: {os.cpu_count()}, load average at start: {load()}")
    if "read" in parts:
        part_read(args)
    if "burst" in parts:
        part_burst(args)
    if "latency" in parts:
        part_latency(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
