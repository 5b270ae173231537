#!/usr/bin/env python3
"""Scale-out fault test: several `kj serve` (API only) and `kj worker` processes (CPU) on one
PostgreSQL server. Submissions go to the servers in turn while workers are killed with SIGKILL
and restarted, PostgreSQL is restarted once and one server is killed and restarted. Afterwards
every submission has exactly one final result, no job has runs of two attempts, and no
submission has a run recorded twice. Prints the counts as JSON.

Starts its own throwaway cluster (scripts/test_postgres.sh) so it can restart it."""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

FINAL = ("done", "failed")


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


class Process:
    def __init__(self, name, argv, env, log_dir):
        self.name, self.argv, self.env = name, argv, env
        self.log_path = os.path.join(log_dir, name + ".log")
        self.proc = None
        self.start()

    def start(self):
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     env=self.env, start_new_session=True)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def wait_for_line(path, needle, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path) as f:
            for line in f:
                if needle in line:
                    return line
        time.sleep(0.1)
    raise AssertionError(f"{path}: no '{needle}' after {timeout} s:\n" + open(path).read())


def call(url, method, path, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def psql(db_url, sql):
    out = subprocess.run(["psql", db_url, "-qAtX", "-F", "\t", "-c", sql], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kj", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--servers", type=int, default=2)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--submissions", type=int, default=20)
    ap.add_argument("--kills", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=600, help="seconds for every result")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    log("seed", seed)

    tmp = tempfile.mkdtemp(prefix="kj-scale-out-")
    os.chmod(tmp, 0o755)
    pg_dir = os.path.join(tmp, "postgres")
    script = os.path.join(args.root, "scripts", "test_postgres.sh")
    server_url = subprocess.run([script, "start", pg_dir], check=True, capture_output=True,
                                text=True).stdout.strip()
    db = server_url + "/postgres"
    try:
        problems = os.path.join(tmp, "problems")
        shutil.copytree(os.path.join(args.root, "problems", "vectoradd"),
                        os.path.join(problems, "vectoradd"))
        shutil.copy(os.path.join(args.root, "problems", "utils.py"), problems)
        env = dict(os.environ)
        python = env.get("KJ_PYTHON", "python3")
        harness = os.path.join(args.root, "harness")
        logs = os.path.join(tmp, "logs")
        os.makedirs(logs)

        servers = []
        for i in range(args.servers):
            # Port 0: the server binds a free port and names it (a port picked here could be
            # taken by a test running beside this one before the server binds it).
            p = Process(f"server{i}", [args.kj, "serve", "--db", db, "--problems", problems,
                                       "--port", "0", "--no-workers", "--python", python,
                                       "--harness", harness], env, logs)
            url = wait_for_line(p.log_path, "listening on").split("listening on ")[1].split()[0]
            p.argv[p.argv.index("--port") + 1] = url.rsplit(":", 1)[1]  # restarts bind it again
            servers.append((p, url))
        token = wait_for_line(servers[0][0].log_path, "admin token").split()[-1]
        workers = []
        for i in range(args.workers):
            workers.append(Process(f"w{i}", [args.kj, "worker", "--db", db, "--cpu", "--name",
                                             f"w{i}", "--lease", "8", "--python", python,
                                             "--harness", harness], env, logs))

        correct = open(os.path.join(problems, "vectoradd", "solutions", "correct",
                                    "pytorch.py")).read()
        wrong = open(os.path.join(problems, "vectoradd", "solutions", "wrong",
                                  "subtract.py")).read()
        expected = {}
        submit_errors = 0

        def submit(i):
            nonlocal submit_errors
            code = correct if i % 2 == 0 else wrong
            for attempt in range(100):
                _, url = servers[(i + attempt) % len(servers)]
                try:
                    created = call(url, "POST", "/api/submissions", token,
                                   {"leaderboard": "vectoradd", "code": code + f"\n# {i}\n",
                                    "mode": "test", "gpu": "cpu"})
                    expected[created["id"]] = "accepted" if i % 2 == 0 else "wrong_answer"
                    return
                except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                    submit_errors += 1  # a server or the database is restarting: try again
                    time.sleep(0.5)
            raise AssertionError(f"submission {i} never accepted")

        # Chaos while submissions arrive and are judged.
        events = {"worker_kills": 0, "postgres_restarts": 0, "server_restarts": 0}
        chaos_done = threading.Event()

        def chaos():
            steps = ["kill"] * args.kills + ["postgres", "server"]
            rng.shuffle(steps)
            # The restarts fall in the middle, not at the very end.
            for step in steps:
                time.sleep(rng.uniform(0.5, 2.5))
                if step == "kill":
                    w = rng.choice(workers)
                    w.kill9()
                    events["worker_kills"] += 1
                    time.sleep(rng.uniform(0, 1))
                    w.start()  # same name: its abandoned job is requeued at registration
                elif step == "postgres":
                    log("restarting PostgreSQL")
                    subprocess.run([script, "restart", pg_dir], check=True)
                    events["postgres_restarts"] += 1
                else:
                    p, _ = servers[-1]
                    log("killing and restarting", p.name)
                    p.kill9()
                    p.start()
                    events["server_restarts"] += 1
            chaos_done.set()

        start = time.monotonic()
        chaos_thread = threading.Thread(target=chaos, daemon=True)
        chaos_thread.start()
        for i in range(args.submissions):
            submit(i)
            time.sleep(0.05)
        chaos_thread.join()
        log("submitted", len(expected), "; chaos over:", events)

        deadline = start + args.timeout
        ids = ",".join(str(i) for i in expected)
        while True:
            pending = psql(db, f"SELECT COUNT(*) FROM submissions WHERE id IN ({ids}) AND "
                               "status NOT IN ('done', 'failed')")[0][0]
            if pending == "0":
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{pending} submissions not final after {args.timeout} s")
            time.sleep(1)
        elapsed = time.monotonic() - start

        rows = psql(db, f"SELECT id, status, COALESCE(verdict, '') FROM submissions "
                        f"WHERE id IN ({ids})")
        status = {int(r[0]): (r[1], r[2]) for r in rows}
        assert set(status) == set(expected), "every submission is stored"
        jobs_per_submission = psql(db, "SELECT submission_id, COUNT(*), "
                                       "SUM(CASE WHEN state IN ('done','failed') THEN 1 ELSE 0 END)"
                                       " FROM jobs GROUP BY submission_id")
        bad_jobs = [r for r in jobs_per_submission if r[1] != "1" or r[2] != "1"]
        assert not bad_jobs, f"submissions without exactly one final job: {bad_jobs}"
        runs = psql(db, "SELECT submission_id, COUNT(*), COUNT(DISTINCT job_id) FROM runs "
                        "GROUP BY submission_id")
        twice = [r for r in runs if r[1] != "1" or r[2] != "1"]
        assert not twice, f"runs recorded twice: {twice}"
        with_runs = {int(r[0]) for r in runs}
        wrong_verdicts, internal_errors = [], 0
        for sid, (state, verdict) in status.items():
            if state == "failed":
                assert verdict == "internal_error" and sid not in with_runs, (sid, state, verdict)
                internal_errors += 1
            else:
                assert sid in with_runs, f"submission {sid} is done without a run"
                if verdict != expected[sid]:
                    wrong_verdicts.append((sid, verdict, expected[sid]))
        assert not wrong_verdicts, f"verdicts differ from the declared ones: {wrong_verdicts}"
        attempts = psql(db, f"SELECT COALESCE(SUM(attempts), 0), COUNT(*) FILTER (WHERE "
                            f"attempts > 1) FROM jobs WHERE submission_id IN ({ids})")[0]
        failed_errors = [r[0] for r in psql(db, f"SELECT error FROM jobs WHERE state = 'failed' "
                                                 f"AND submission_id IN ({ids})")]
        summary = {
            "seed": seed, "servers": args.servers, "workers": args.workers,
            "submissions": len(expected), "final": len(status),
            "done": sum(1 for s in status.values() if s[0] == "done"),
            "internal_error": internal_errors, "runs": sum(int(r[1]) for r in runs),
            "claims": int(attempts[0]), "jobs_claimed_more_than_once": int(attempts[1]),
            "submit_retries": submit_errors, "seconds": round(elapsed, 1), **events,
            "internal_error_reasons": failed_errors,
        }
        print(json.dumps(summary))
        # A job may fail only because the chaos took it from its worker three times.
        infra = [e for e in failed_errors if "restarted" not in e and "lease expired" not in e]
        assert not infra, f"jobs failed for another reason than the chaos: {infra}"
        assert summary["done"] >= len(expected) // 2, "most submissions are judged"
        assert events["worker_kills"] == args.kills and events["postgres_restarts"] == 1
        assert events["server_restarts"] == 1
        return 0
    except BaseException:
        for name in sorted(os.listdir(os.path.join(tmp, "logs"))) if os.path.isdir(
                os.path.join(tmp, "logs")) else []:
            with open(os.path.join(tmp, "logs", name)) as f:
                tail = f.read()[-3000:]
            print(f"--- {name} (tail)\n{tail}", file=sys.stderr)
        raise
    finally:
        for p in [s for s, _ in locals().get("servers", [])] + locals().get("workers", []):
            try:
                p.stop()
            except Exception:
                pass
        subprocess.run([script, "stop", pg_dir], check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
