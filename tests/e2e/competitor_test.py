#!/usr/bin/env python3
"""What a competitor reads from `kj serve` through `kj submit`, `kj submissions` and the event
stream: the client config kj serve keeps pointing at itself, benchmark medians and speedups as
numbers (not "0 ns", not "0.00x"), the place in the queue while waiting, a score column, and
deleting one's own submission."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import Api, JudgeServer, free_port, read, server_home  # noqa: E402


def sse_events(url, token, timeout=600):
    """The whole event stream of a submission, as (event, data) pairs."""
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text = response.read().decode()
    events = []
    for block in text.split("\n\n"):
        name = data = None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if name:
            events.append((name, data))
    return events


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    root = args.root
    tmp, problems, env = server_home(root, "kj-competitor-test-")
    server = None
    try:
        db = os.path.join(tmp, "kj.db")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        # A config left by an earlier server on this URL, with a token of another database.
        config = os.path.join(tmp, ".config", "kerneljudge", "config.json")
        os.makedirs(os.path.dirname(config))
        with open(config, "w") as f:
            json.dump({"server": url, "token": "kj_" + "1" * 64}, f)
        server = JudgeServer(args.kj, db, problems, port, env, rate_limit=100)
        time.sleep(1)  # the config line follows the token line
        assert any("rewrote " + config in line for line in server.log), server.log
        with open(config) as f:
            assert json.load(f) == {"server": url, "token": server.admin_token}
        api = Api(server.url)
        alice = api.json("POST", "/api/admin/users", server.admin_token, {"name": "alice"},
                         expect=201)["token"]
        bob = api.json("POST", "/api/admin/users", server.admin_token, {"name": "bob"},
                       expect=201)["token"]
        correct = os.path.join(root, "problems", "vectoradd", "solutions", "correct", "pytorch.py")

        def kj(*argv, token=None):
            extra = ["--server", server.url, "--token", token] if token else []
            return subprocess.run([args.kj, *argv, *extra], capture_output=True, text=True,
                                  env=env, timeout=600)

        # kj submit through the rewritten config (no flags), in benchmark mode: real medians.
        proc = kj("submit", correct, "--leaderboard", "vectoradd", "--mode", "benchmark")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        medians = re.findall(r"median (\S+ \S+)", proc.stdout)
        assert medians and all(m != "0 ns" for m in medians), proc.stdout
        speedups = re.findall(r"(\S+)× the reference", proc.stdout)
        assert speedups and all(float(x) > 0 for x in speedups), proc.stdout

        # Three submissions on the one CPU worker: the last waits, and its stream says where.
        ids = [api.json("POST", "/api/submissions", alice,
                        {"leaderboard": "vectoradd", "code": read(correct), "mode": mode},
                        expect=201)["id"] for mode in ("leaderboard", "test", "test")]
        events = sse_events(f"{server.url}/api/submissions/{ids[-1]}/events", alice)
        names = [name for name, _ in events]
        assert "queue" in names and names.index("queue") < names.index("progress"), names
        places = [data["position"] for name, data in events if name == "queue"]
        assert places[0] >= 1 and places == sorted(places, reverse=True), places
        assert names[-1] == "result" and events[-1][1]["verdict"] == "accepted", events[-1]
        api.wait_final(ids[0], alice)

        # kj submissions list: a score column with the ranked submission's score.
        proc = kj("submissions", "list", token=alice)
        assert proc.returncode == 0, proc.stderr
        header, *rows = proc.stdout.splitlines()
        assert "score" in header.split(), header
        ranked_row = next(r for r in rows if r.split()[0] == str(ids[0]))
        assert re.search(r"\d (ns|µs|ms|s) ", ranked_row), ranked_row

        # Deleting: another user may not; the owner may, and the ranking forgets it.
        proc = kj("submissions", "delete", str(ids[0]), token=bob)
        assert proc.returncode == 2 and "not_yours" in proc.stderr, proc.stderr
        assert [r["user"] for r in api.json(
            "GET", "/api/leaderboards/vectoradd/ranking?gpu=cpu")["ranking"]] == ["alice"]
        proc = kj("submissions", "delete", str(ids[0]), token=alice)
        assert proc.returncode == 0 and f"deleted submission {ids[0]}" in proc.stdout, proc.stderr
        proc = kj("submissions", "show", str(ids[0]), token=alice)
        assert proc.returncode == 2 and "unknown_submission" in proc.stderr, proc.stderr
        assert api.json("GET", "/api/leaderboards/vectoradd/ranking?gpu=cpu")["ranking"] == []

        # Restarted with a config that points elsewhere: left alone, and kj serve says so.
        server.stop()
        with open(config, "w") as f:
            json.dump({"server": "http://127.0.0.1:1", "token": server.admin_token}, f)
        server = JudgeServer(args.kj, db, problems, port, env, rate_limit=100)
        time.sleep(1)
        assert any("points at http://127.0.0.1:1" in line for line in server.log), server.log
        with open(config) as f:
            assert json.load(f)["server"] == "http://127.0.0.1:1"
        print("competitor e2e: all checks passed")
        return 0
    finally:
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
