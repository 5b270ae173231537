#!/usr/bin/env python3
"""A CPU worker's zygote end to end (docs/sandbox.md, "Zygote"), through `kj serve`:

- a submission that leaves state everywhere it can (tests/corpus/zygote_leave_state.py) and
  fails if it finds state an earlier run left, judged three times in a row by one worker: each
  run accepted, none passed over to a cold start (no zygote warning in its run);
- the zygote killed from outside: the next submission is still judged right, and its run says
  the zygote was passed over; the worker starts a new zygote, and the submission after that is
  forked from it again (no warning).

Usage: zygote_test.py --kj KJ --root REPO
"""

import argparse
import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import Api, JudgeServer, free_port, read, server_home  # noqa: E402


def zygote_pids(server_pid):
    """Host pids of the zygote processes under the server (their command line names the module)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            pass

    def under_server(pid):
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == server_pid:
                return True
        return False

    found = []
    for pid in parents:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"kj_harness.zygote" in f.read() and under_server(pid):
                    found.append(pid)
        except OSError:
            pass
    return found


def judged(api, token, code, name):
    sid = api.json("POST", "/api/submissions", token,
                   {"leaderboard": "vectoradd", "code": code, "file_name": name, "mode": "test"},
                   expect=201)["id"]
    final = api.wait_final(sid, token)
    full = api.json("GET", f"/api/submissions/{sid}", token)
    warnings = [w for run in full.get("runs", [])
                for w in (run.get("result") or {}).get("sandbox", {}).get("warnings", [])]
    return final["verdict"], warnings


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what} within {timeout} s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    tmp, problems, env = server_home(args.root, "kj-zygote-test-")
    server = None
    try:
        server = JudgeServer(args.kj, os.path.join(tmp, "kj.db"), problems, free_port(), env)
        api = Api(server.url)
        admin = server.admin_token  # exempt from the rate limit
        leave_state = read(os.path.join(args.root, "tests", "corpus", "zygote_leave_state.py"))
        correct = read(os.path.join(args.root, "problems", "vectoradd", "solutions", "correct",
                                    "pytorch.py"))

        first = wait_for(lambda: zygote_pids(server.proc.pid), 60, "a zygote under the server")
        for attempt in range(3):
            verdict, warnings = judged(api, admin, leave_state, "zygote_leave_state.py")
            assert verdict == "accepted", f"run {attempt}: {verdict}: state of an earlier run seen"
            assert not warnings, f"run {attempt} was not forked from the zygote: {warnings}"
        assert zygote_pids(server.proc.pid) == first, "the submissions reached the zygote"
        print(f"ok   three runs of zygote_leave_state.py in a row, accepted, forked from zygote "
              f"{first}")

        for pid in first:
            os.kill(pid, signal.SIGKILL)
        verdict, warnings = judged(api, admin, correct, "pytorch.py")
        assert verdict == "accepted", verdict
        assert any("zygote" in w and "harness started for this run" in w for w in warnings), warnings
        print(f"ok   zygote killed: the next run judged in a harness of its own: {warnings[0]}")
        second = wait_for(lambda: [p for p in zygote_pids(server.proc.pid) if p not in first], 60,
                          "a new zygote")
        verdict, warnings = judged(api, admin, correct, "pytorch.py")
        assert verdict == "accepted" and not warnings, (verdict, warnings)
        print(f"ok   a new zygote {second} serves the run after that")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("zygote e2e: all passed")


if __name__ == "__main__":
    main()
