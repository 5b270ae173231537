#!/usr/bin/env python3
"""The judge server end to end: `kj serve` (SQLite, CPU worker) on a copy of vectoradd, users made
through the admin API, submissions through `kj submit` and the REST API, rankings, code access
around the deadline, refused requests that change nothing, and recovery after kill -9."""

import argparse
import gzip
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

FINAL = ("done", "failed")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JudgeServer:
    """A `kj serve` process; its stdout lines are read on a thread into a queue."""

    def __init__(self, kj, db, problems, port, env, rate_limit=4, extra=()):
        self.proc = subprocess.Popen(
            [kj, "serve", "--db", "sqlite:" + db, "--problems", problems, "--port", str(port),
             "--no-gpu", "--rate-limit", str(rate_limit), "--max-time", "0.2", "--max-repeats",
             "10", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines = queue.Queue()
        self.log = []
        threading.Thread(target=self._read, daemon=True).start()
        self.url = None
        self.admin_token = None
        deadline = time.monotonic() + 60
        while self.url is None:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                raise AssertionError("kj serve exited:\n" + "".join(self.log))
            if "admin token" in line:
                self.admin_token = line.split()[-1]
            if "listening on" in line:
                self.url = line.split("listening on ")[1].split()[0]
        # The token line follows the URL line on first start.
        try:
            line = self.lines.get(timeout=2)
            if line and "admin token" in line:
                self.admin_token = line.split()[-1]
        except queue.Empty:
            pass

    def _read(self):
        for line in self.proc.stdout:
            self.log.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=300)


class Api:
    def __init__(self, url):
        self.url = url

    def call(self, method, path, token=None, body=None, raw=None, content_type=None,
             headers=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type or "application/json")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        for k, v in (headers or {}).items():
            request.add_header(k, v)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def json(self, method, path, token=None, body=None, expect=200, **kw):
        status, headers, data = self.call(method, path, token, body, **kw)
        assert status == expect, f"{method} {path}: HTTP {status}, expected {expect}: {data[:500]!r}"
        return json.loads(data) if data else None

    def error(self, method, path, token, body, status, code, **kw):
        got, headers, data = self.call(method, path, token, body, **kw)
        parsed = json.loads(data)
        assert got == status and parsed["error"]["code"] == code, (
            f"{method} {path}: expected {status} {code}, got {got} {data[:300]!r}")
        assert parsed["error"]["message"], "an error says why"
        return headers

    def wait_final(self, submission_id, token, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.json("GET", f"/api/submissions/{submission_id}", token)
            if s["status"] in FINAL:
                return s
            time.sleep(0.25)  # polling the status, with a deadline
        raise AssertionError(f"submission {submission_id} not final after {timeout} s")


def read(path):
    with open(path) as f:
        return f.read()


def declared(path):
    return read(path).splitlines()[0].split("expect:")[1].strip()


def multipart(fields, file_name, content):
    boundary = "kjtestboundary7d1f"
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     f'{value}\r\n')
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                 f'filename="{file_name}"\r\nContent-Type: text/x-python\r\n\r\n{content}\r\n')
    parts.append(f"--{boundary}--\r\n")
    return "".join(parts).encode(), "multipart/form-data; boundary=" + boundary



def server_home(root: str, prefix: str) -> tuple[str, str, dict]:
    """A scratch folder for one test's server: problems/vectoradd (with utils.py) in it, and
    the environment the server and its clients run in (HOME there, so the client config is the
    test's own; no KJ_SERVER/KJ_TOKEN from outside)."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    problems = os.path.join(tmp, "problems")
    os.makedirs(problems)
    shutil.copytree(os.path.join(root, "problems", "vectoradd"), os.path.join(problems, "vectoradd"))
    shutil.copy(os.path.join(root, "problems", "utils.py"), problems)
    env = dict(os.environ, HOME=tmp, KJ_HARNESS_DIR=os.path.join(root, "harness"))
    env.pop("KJ_SERVER", None)
    env.pop("KJ_TOKEN", None)
    return tmp, problems, env

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    root = args.root
    tmp, problems, env = server_home(root, "kj-server-test-")
    server = None
    try:
        db = os.path.join(tmp, "kj.db")
        port = free_port()
        server = JudgeServer(args.kj, db, problems, port, env)
        api = Api(server.url)
        admin = server.admin_token
        assert admin and admin.startswith("kj_"), "first start prints the admin token"

        solutions = os.path.join(root, "problems", "vectoradd", "solutions")
        correct = os.path.join(solutions, "correct", "pytorch.py")
        wrong = os.path.join(solutions, "wrong", "subtract.py")
        hostile = os.path.join(root, "tests", "corpus", "exit_at_import.py")

        # The API describes itself, and lists the bundled problem.
        spec = api.json("GET", "/api/openapi.json")
        for path in ("/api/submissions", "/api/submissions/{id}/events",
                     "/api/leaderboards/{name}/ranking", "/api/admin/users"):
            assert path in spec["paths"], path
        boards = api.json("GET", "/api/leaderboards")["leaderboards"]
        assert [b["name"] for b in boards] == ["vectoradd"], boards
        assert "cpu" in boards[0]["gpu_types"]
        template = api.call("GET", "/api/leaderboards/vectoradd/template")[2].decode()
        assert template == read(os.path.join(root, "problems", "vectoradd", "template.py"))

        # Users through the admin API; only admins may make them.
        alice = api.json("POST", "/api/admin/users", admin, {"name": "alice"}, expect=201)["token"]
        bob = api.json("POST", "/api/admin/users", admin, {"name": "bob"}, expect=201)["token"]
        api.error("POST", "/api/admin/users", alice, {"name": "mallory"}, 403, "admin_only")
        api.error("POST", "/api/admin/users", admin, {"name": "alice"}, 409, "user_exists")

        def counts():
            return tuple(len(api.json("GET", "/api/submissions?mine&limit=1000", t)["submissions"])
                         for t in (admin, alice, bob))

        def kj_submit(token, *extra):
            return subprocess.run([args.kj, "submit", *extra, "--server", server.url,
                                   "--token", token], capture_output=True, text=True, env=env,
                                  timeout=600)

        # Refused requests: the right status and code, and nothing stored.
        before = counts()
        code = read(correct)
        api.error("POST", "/api/submissions", alice, {"leaderboard": "vectoradd"}, 400,
                  "missing_field")
        api.error("POST", "/api/submissions", alice, {"code": code}, 400, "missing_field")
        api.error("POST", "/api/submissions", alice, {"leaderboard": "nope", "code": code}, 404,
                  "unknown_leaderboard")
        api.error("POST", "/api/submissions", alice, None, 400, "invalid_json", raw=b"{not json")
        api.error("POST", "/api/submissions", alice,
                  {"leaderboard": "vectoradd", "code": code, "mode": "fastest"}, 400,
                  "invalid_mode")
        api.error("POST", "/api/submissions", alice,
                  {"leaderboard": "vectoradd", "code": code, "gpu": "B200"}, 400, "unknown_gpu")
        api.error("POST", "/api/submissions", alice,
                  {"leaderboard": "vectoradd", "code": code + "#" * (1 << 20)}, 413,
                  "source_too_large")
        api.error("POST", "/api/submissions", "kj_" + "0" * 64,
                  {"leaderboard": "vectoradd", "code": code}, 401, "invalid_token")
        api.error("POST", "/api/submissions", None, {"leaderboard": "vectoradd", "code": code},
                  401, "missing_token")
        assert counts() == before, f"refused requests stored something: {before} -> {counts()}"
        big = os.path.join(tmp, "big.py")
        with open(big, "w") as f:
            f.write(code + "#" * (1 << 20))
        proc = kj_submit(alice, big, "--leaderboard", "vectoradd")
        assert proc.returncode == 2 and "source_too_large" in proc.stderr, (proc.returncode,
                                                                            proc.stderr)

        # Through kj submit: progress lines (stdout is a pipe), the result, the exit code.
        proc = kj_submit(alice, correct, "--leaderboard", "vectoradd")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "judging on cpu" in proc.stdout and "verdict: accepted" in proc.stdout, proc.stdout
        proc = kj_submit(bob, wrong, "--leaderboard", "vectoradd", "--json")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        bob_wrong = json.loads(proc.stdout)
        assert bob_wrong["verdict"] == declared(wrong), bob_wrong["verdict"]
        assert bob_wrong["runs"][0]["result"]["tests"], "the result holds the per-test report"

        # Through the API: a hostile file, a '#!POPCORN leaderboard' directive, a multipart upload.
        hostile_id = api.json("POST", "/api/submissions", alice,
                              {"leaderboard": "vectoradd", "code": read(hostile),
                               "file_name": "exit_at_import.py"}, expect=201)["id"]
        directive_id = api.json("POST", "/api/submissions", alice,
                                {"code": "#!POPCORN leaderboard vectoradd\n" + code},
                                expect=201)["id"]
        body, content_type = multipart({"leaderboard": "vectoradd"}, "pytorch.py", code)
        status, _, data = api.call("POST", "/api/submissions", bob, raw=body,
                                   content_type=content_type)
        assert status == 201, data
        multipart_id = json.loads(data)["id"]
        assert api.wait_final(hostile_id, alice)["verdict"] == declared(hostile)
        directive = api.wait_final(directive_id, alice)
        assert (directive["leaderboard"], directive["verdict"]) == ("vectoradd", "accepted")
        multipart_sub = api.wait_final(multipart_id, bob)
        assert (multipart_sub["file_name"], multipart_sub["verdict"]) == ("pytorch.py", "accepted")

        # Progress as Server-Sent Events, ending with the result; Last-Event-ID resumes.
        status, headers, stream = api.call("GET", f"/api/submissions/{directive_id}/events", alice)
        events = [block for block in stream.decode().split("\n\n") if block.strip()]
        assert events[-1].startswith("event: result"), events[-1]
        ids = [line[4:] for block in events for line in block.splitlines() if line.startswith("id: ")]
        assert len(ids) >= 3, events
        _, _, resumed = api.call("GET", f"/api/submissions/{directive_id}/events", alice,
                                 headers={"Last-Event-ID": ids[0]})
        resumed_ids = [line[4:] for line in resumed.decode().splitlines() if line.startswith("id: ")]
        assert resumed_ids == ids[1:], (ids, resumed_ids)

        # Ranked: one leaderboard-mode submission each; the ranking orders them by score.
        ranked = {}
        for name, token, path in (("alice", alice, correct), ("bob", bob, correct)):
            ranked[name] = api.json("POST", "/api/submissions", token,
                                    {"leaderboard": "vectoradd", "code": read(path),
                                     "mode": "leaderboard"}, expect=201)["id"]
        # The server caches rankings: reading the ranking while each job runs keeps the cached
        # entry far younger than its maximum age (5 s), so the result must show because the
        # completion invalidated it.
        def ranked_users():
            return [r["user"] for r in
                    api.json("GET", "/api/leaderboards/vectoradd/ranking?gpu=cpu")["ranking"]]

        # The HTML leaderboard keeps its rendered table with the cached ranking: it too must
        # show a new ranked result on the next load.
        def page_users():
            status, _, page = api.call("GET", "/leaderboards/vectoradd?gpu=cpu")
            assert status == 200, status
            return re.findall(r'<td class="user"><a href="/users/[^"]+">([^<]+)</a>', page.decode())

        assert ranked_users() == [] and page_users() == []
        scores = {}
        for name, submission_id in ranked.items():
            token = alice if name == "alice" else bob
            deadline = time.monotonic() + 600
            while True:
                users = ranked_users()
                s = api.json("GET", f"/api/submissions/{submission_id}", token)
                if s["status"] in FINAL:
                    break
                assert name not in users and name not in page_users(), users
                assert time.monotonic() < deadline, f"submission {submission_id} not final"
                time.sleep(0.25)  # polling the status, with a deadline
            assert name in ranked_users(), "a new ranked result shows at once"
            assert name in page_users(), "and on the next load of the leaderboard page"
            assert s["verdict"] == "accepted" and s["score"] > 0, s
            assert sorted(r["secret"] for r in s["runs"]) == [False, True], s["runs"]
            scores[name] = s["score"]
        # One worker judged both, one after the other: the later run did not time the reference
        # again but got the earlier run's times (--reference-keep), and says how old they are.
        public = [next(r["result"] for r in api.json("GET", f"/api/submissions/{i}", admin)["runs"]
                       if not r["secret"]) for i in ranked.values()]
        kept = [r for r in public if "reference_kept_age_s" in r.get("process_times", {})]
        assert kept and all(r["speedup"] > 0 and "reference_wall_s" not in r["process_times"]
                            for r in kept), [r.get("process_times") for r in public]
        ranking = api.json("GET", "/api/leaderboards/vectoradd/ranking?gpu=cpu")["ranking"]
        expected_order = sorted(scores, key=lambda n: scores[n])
        assert [r["user"] for r in ranking] == expected_order, (ranking, scores)
        assert [r["score"] for r in ranking] == [scores[n] for n in expected_order]
        assert [r["submission_id"] for r in ranking] == [ranked[n] for n in expected_order]
        # A submission marked hacked leaves the ranking.
        api.json("POST", f"/api/submissions/{ranked['bob']}/hacked", admin, {"hacked": True})
        ranking = api.json("GET", "/api/leaderboards/vectoradd/ranking")["ranking"]
        assert [r["user"] for r in ranking] == ["alice"], ranking
        assert page_users() == ["alice"], "the page forgets a hacked submission too"
        # Clients that accept gzip get the same bodies gzipped (kept so with the ranking).
        for path in ("/api/leaderboards/vectoradd/ranking?gpu=cpu", "/leaderboards/vectoradd?gpu=cpu"):
            _, plain_headers, plain = api.call("GET", path)
            _, headers, packed = api.call("GET", path, headers={"Accept-Encoding": "br, gzip;q=0.5"})
            assert headers.get("Content-Encoding") == "gzip", headers
            assert "Accept-Encoding" in headers.get("Vary", "") and "Content-Encoding" not in plain_headers
            assert gzip.decompress(packed) == plain and len(packed) < len(plain), (len(packed), len(plain))
            _, headers, _ = api.call("GET", path, headers={"Accept-Encoding": "gzip;q=0, br"})
            assert "Content-Encoding" not in headers, headers
        # The speedup over the reference comes with the ranking (one store query a page).
        assert ranking[0]["speedup"] > 0, ranking
        _, _, page = api.call("GET", "/leaderboards/vectoradd?gpu=cpu")
        assert re.search(r'<td class="num">[0-9.]+×</td>', page.decode()), page[-2000:]
        api.error("POST", f"/api/submissions/{ranked['bob']}/hacked", bob, {}, 403, "admin_only")

        # Rate limit: alice has made 4 submissions on vectoradd this hour.
        before = counts()
        headers = api.error("POST", "/api/submissions", alice,
                            {"leaderboard": "vectoradd", "code": code}, 429, "rate_limited")
        assert int(headers["Retry-After"]) > 0, headers
        assert counts() == before

        # Code: the owner, not another user, until the deadline passes.
        first = api.json("GET", "/api/submissions?mine", alice)["submissions"][-1]
        status, _, body = api.call("GET", f"/api/submissions/{first['id']}/code", alice)
        assert status == 200 and body.decode() == code
        api.error("GET", f"/api/submissions/{first['id']}/code", bob, None, 403, "not_yours")
        api.error("GET", f"/api/submissions/{first['id']}", bob, None, 403, "not_yours")
        api.error("PUT", "/api/admin/leaderboards/vectoradd/deadline", admin,
                  {"deadline": "yesterday"}, 400, "invalid_field")
        api.json("PUT", "/api/admin/leaderboards/vectoradd/deadline", admin,
                 {"deadline": "2001-01-01T00:00:00Z"})
        status, _, body = api.call("GET", f"/api/submissions/{first['id']}/code", bob)
        assert status == 200 and body.decode() == code
        before = counts()
        api.error("POST", "/api/submissions", bob, {"leaderboard": "vectoradd", "code": code}, 403,
                  "deadline_passed")
        assert counts() == before

        # kill -9 while a job runs; after a restart on the same database every submission has
        # exactly one final result.
        victim = api.json("POST", "/api/submissions", admin,
                          {"leaderboard": "vectoradd", "code": code}, expect=201)["id"]
        queued = api.json("POST", "/api/submissions", admin,
                          {"leaderboard": "vectoradd", "code": read(wrong)}, expect=201)["id"]
        deadline = time.monotonic() + 60
        while api.json("GET", f"/api/submissions/{victim}", admin)["status"] != "running":
            assert time.monotonic() < deadline, "the job never started"
            time.sleep(0.05)  # polling the status, with a deadline
        server.kill9()
        server = JudgeServer(args.kj, db, problems, port, env)
        assert server.admin_token is None, "the admin token is printed on first start only"
        assert any("recovered 1 job" in line for line in server.log), server.log
        for submission_id in (victim, queued):
            api.wait_final(submission_id, admin)
        all_ids = [s["id"] for t in (admin, alice, bob)
                   for s in api.json("GET", "/api/submissions?mine&limit=1000", t)["submissions"]]
        assert len(all_ids) == 9, all_ids
        for submission_id in all_ids:
            s = api.json("GET", f"/api/submissions/{submission_id}", admin)
            assert s["status"] == "done" and s["verdict"], s
            assert [j["state"] for j in s["jobs"]] == ["done"], s["jobs"]
            assert len(s["runs"]) == (2 if s["mode"] == "leaderboard" else 1), s["runs"]
        victim_sub = api.json("GET", f"/api/submissions/{victim}", admin)
        assert victim_sub["jobs"][0]["attempts"] == 2 and victim_sub["verdict"] == "accepted"

        # kj submissions list / show against the restarted server.
        proc = subprocess.run([args.kj, "submissions", "list", "--json", "--server", server.url,
                               "--token", bob], capture_output=True, text=True, env=env)
        assert proc.returncode == 0 and len(json.loads(proc.stdout)["submissions"]) == 3
        proc = subprocess.run([args.kj, "submissions", "show", str(bob_wrong["id"]), "--server",
                               server.url, "--token", bob], capture_output=True, text=True, env=env)
        assert proc.returncode == 1 and "wrong_answer" in proc.stdout, proc.stdout

        metrics = api.call("GET", "/metrics")[2].decode()
        assert 'kj_queue_depth{gpu_type="cpu"} 0' in metrics, metrics
        assert "kj_job_duration_seconds_count" in metrics
        print("server e2e: all checks passed")
        return 0
    finally:
        if server:
            server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
