#!/usr/bin/env python3
"""Who may do what on `kj serve`: every route the server registers (read from its source, so a
new route without a row here fails this test) x {anonymous, another user, the owner, an admin}
x {before, after the leaderboard's deadline}, each asserting the HTTP status, and that nothing
private reaches anyone it should not in any answer, page or event stream:

  - the owner's code (a marker line in it) before the deadline, to anyone but the owner and
    admins;
  - any user's API token or CLI id, to anyone (only an admin's own creations return a new one);
  - the leaderboard's secret seed, to anyone; the secret (ranked) run's result and any seed in it
    derived from the secret, to anyone but admins.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import sqlite3
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import Api, JudgeServer, free_port, multipart, server_home  # noqa: E402

ROLES = ("anonymous", "other", "owner", "admin")
PHASES = ("before", "after")
MARKER = "access-matrix-private-marker-5e1f"
ROUTE = re.compile(r'http\.(Get|Post|Put|Delete|Patch)\(\s*(?:R"\((.*?)\)"|"((?:[^"\\]|\\.)*)")',
                   re.S)


def routes_in_source(root):
    """(METHOD, pattern) of every route the server registers, as written in its source."""
    found = set()
    for folder, _, files in os.walk(os.path.join(root, "src", "server")):
        for name in files:
            if name.endswith(".cpp"):
                with open(os.path.join(folder, name)) as f:
                    for method, raw, plain in ROUTE.findall(f.read()):
                        found.add((method.upper(), raw or plain))
    return found


def request(base_url, method, path, headers, body=None, raw=None, content_type=None):
    """One request, answered as it is: redirects are not followed, streams are read to their
    end. Returns (status, headers, body)."""
    url = urllib.parse.urlsplit(base_url)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    headers = dict(headers)
    if data is not None:
        headers["Content-Type"] = content_type or "application/json"
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


class World:
    """The server, its users and the submissions the matrix reads, changes and deletes."""

    def __init__(self, kj, root):
        self.tmp, problems, env = server_home(root, "kj-access-")
        self.kj = kj
        self.db = os.path.join(self.tmp, "kj.db")
        self.server = JudgeServer(kj, self.db, problems, free_port(), env, rate_limit=1000)
        try:
            self.api = Api(self.server.url)
            admin = self.server.admin_token
            self.tokens = {"admin": admin}
            for role, name in (("owner", "alice"), ("other", "bob")):
                made = self.api.json("POST", "/api/admin/users", admin, {"name": name}, expect=201)
                self.tokens[role] = made["token"]
            self.names = {"owner": "alice", "other": "bob"}
            self.lb = "vectoradd"
            self.gpu = self.api.json("GET", "/gpus/" + self.lb)[0]
            solution = os.path.join(problems, "vectoradd", "solutions", "correct", "pytorch.py")
            with open(solution) as f:
                self.code = f.read().replace("\n", f"\n# {MARKER}\n", 1)
            self.set_deadline("2100-01-01T00:00:00Z")
            # The one every read route looks at: ranked, so it has a secret run.
            self.ranked = self.submit("owner", "leaderboard")
            self.hacked = self.submit("owner", "test")
            # One fresh submission of the owner's for each delete that may succeed.
            self.deletable = {(route, role, phase): self.submit("owner", "test")
                              for route in ("api", "kernelbot") for role in ("owner", "admin")
                              for phase in PHASES}
            for sid in [self.ranked, self.hacked, *self.deletable.values()]:
                self.api.wait_final(sid, admin, timeout=600)
            self.secret_values = self.secret_case_values()
            self.new_users = 0
            self.marker_seen = set()  # (route, role, phase) whose answer held the owner's code
        except BaseException:
            self.close()  # the server stops and its folder goes on any failure here
            raise

    def close(self):
        self.server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def submit(self, role, mode):
        body = {"leaderboard": self.lb, "gpu": self.gpu, "mode": mode, "code": self.code,
                "file_name": "submission.py"}
        return self.api.json("POST", "/api/submissions", self.tokens[role], body, expect=201)["id"]

    def set_deadline(self, when):
        self.api.json("PUT", f"/api/admin/leaderboards/{self.lb}/deadline",
                      self.tokens["admin"], {"deadline": when})

    def secret_case_values(self):
        """What only admins may see: seeds in the ranked submission's secret run that are not
        the problem's own (those are derived from the leaderboard's secret), and the secret
        itself, which no answer may carry to anyone. As strings to look for."""
        with sqlite3.connect(self.db) as db:
            (self.secret_seed,) = db.execute("SELECT secret_seed FROM leaderboards WHERE name = ?",
                                             (self.lb,)).fetchone()
        s = self.api.json("GET", f"/api/submissions/{self.ranked}", self.tokens["admin"])
        if not any(run["secret"] for run in s["runs"]):
            fail("the ranked submission has no secret run: " + json.dumps(s)[:2000])
        problem = self.api.json("GET", "/leaderboards")
        public = set(re.findall(r'"seed": (-?\d+)', json.dumps(problem)))
        derived = set()
        for run in s["runs"]:
            if run["secret"]:
                derived |= set(re.findall(r'"seed": (-?\d+)', json.dumps(run.get("result", {}))))
        return (derived - public) | {str(self.secret_seed)}

    def headers(self, role, route):
        if role == "anonymous":
            return {}
        token = self.tokens[role]
        return {"Authorization": "Bearer " + token, "X-Popcorn-Cli-Id": token}


def expect_read(role, phase):
    """A submission's details, events, code and page: the owner and admins; anyone afterwards."""
    if role in ("owner", "admin") or phase == "after":
        return 200
    return 401 if role == "anonymous" else 403


def expect_create(role, phase):
    if role == "anonymous":
        return 401
    return 403 if phase == "after" and role != "admin" else None  # None: the route's success


def by_role(anonymous, other, owner, admin):
    table = {"anonymous": anonymous, "other": other, "owner": owner, "admin": admin}
    return lambda role, phase: table[role]


# What each route is asked and what each role gets. A row: (path(world, role, phase),
# request kwargs(world, role, phase), expected status(role, phase)).
def build_rows(w):
    sid = w.ranked

    def deletable(route):
        return lambda w_, role, phase: w_.deletable.get((route, role, phase), w_.ranked)

    def api_post_body(w_, role, phase):
        return {"body": {"leaderboard": w_.lb, "gpu": w_.gpu, "mode": "test", "code": w_.code}}

    def file_body(w_, role, phase):
        raw, ctype = multipart({}, "submission.py", w_.code)
        return {"raw": raw, "content_type": ctype}

    def new_user(w_, role, phase):
        w_.new_users += 1
        return {"body": {"name": f"carol{w_.new_users}"}}

    def new_leaderboard(w_, role, phase):
        return {"body": {"problem_dir": os.path.join(w_.tmp, "problems", "vectoradd"),
                         "name": f"vectoradd-{role}-{phase}", "gpu_types": [w_.gpu]}}

    def login(w_, role, phase):
        token = "" if role == "anonymous" else w_.tokens[role]
        return {"raw": ("token=" + token).encode(),
                "content_type": "application/x-www-form-urlencoded"}

    def admin_only(success):
        return by_role(401, 403, 403, success)

    public = by_role(200, 200, 200, 200)
    user_only = by_role(401, 200, 200, 200)
    own_only = by_role(401, 403, 200, 200)
    P = lambda text: (lambda w_, role, phase: text)  # noqa: E731 - a fixed path
    none = lambda w_, role, phase: {}  # noqa: E731
    lb = w.lb
    return {
        # kj's own API
        ("POST", "/api/submissions"): (P("/api/submissions"), api_post_body,
                                       lambda r, p: expect_create(r, p) or 201),
        ("GET", "/api/submissions"): (P("/api/submissions"), none, user_only),
        ("GET", r"/api/submissions/(\d+)"): (P(f"/api/submissions/{sid}"), none, expect_read),
        ("GET", r"/api/submissions/(\d+)/events"): (P(f"/api/submissions/{sid}/events"), none,
                                                    expect_read),
        ("GET", r"/api/submissions/(\d+)/code"): (P(f"/api/submissions/{sid}/code"), none,
                                                  expect_read),
        # profile mode's summary and report: the owner and admins only, deadline or not (404
        # here: the ranked submission has no profile)
        ("GET", r"/api/submissions/(\d+)/profile"): (P(f"/api/submissions/{sid}/profile"), none,
                                                     by_role(401, 403, 404, 404)),
        ("GET", r"/api/submissions/(\d+)/profile/report"): (
            P(f"/api/submissions/{sid}/profile/report"), none, by_role(401, 403, 404, 404)),
        ("POST", r"/api/submissions/(\d+)/hacked"): (
            P(f"/api/submissions/{w.hacked}/hacked"), lambda *_: {"body": {"hacked": True}},
            admin_only(200)),
        ("DELETE", r"/api/submissions/(\d+)"): (
            lambda w_, role, phase: f"/api/submissions/{deletable('api')(w_, role, phase)}",
            none, own_only_delete),
        ("GET", "/api/leaderboards"): (P("/api/leaderboards"), none, public),
        ("GET", r"/api/leaderboards/([^/]+)"): (P(f"/api/leaderboards/{lb}"), none, public),
        ("GET", r"/api/leaderboards/([^/]+)/ranking"): (P(f"/api/leaderboards/{lb}/ranking"),
                                                        none, public),
        ("GET", r"/api/leaderboards/([^/]+)/template"): (P(f"/api/leaderboards/{lb}/template"),
                                                         none, public),
        ("POST", "/api/admin/users"): (P("/api/admin/users"), new_user,
                                       admin_only(201)),
        ("POST", "/api/admin/tokens"): (P("/api/admin/tokens"),
                                        lambda *_: {"body": {"user": "bob"}},
                                        admin_only(201)),
        ("POST", "/api/admin/leaderboards"): (P("/api/admin/leaderboards"), new_leaderboard,
                                              admin_only(201)),
        ("PUT", r"/api/admin/leaderboards/([^/]+)/deadline"): (
            P(f"/api/admin/leaderboards/{lb}/deadline"),
            lambda w_, role, phase: {"body": {"deadline": "2100-01-01T00:00:00Z"
                                              if phase == "before" else "2000-01-01T00:00:00Z"}},
            admin_only(200)),
        ("GET", "/api/openapi.json"): (P("/api/openapi.json"), none, public),
        ("GET", "/metrics"): (P("/metrics"), none, public),
        # the web pages
        ("GET", "/"): (P("/"), none, public),
        ("GET", r"/leaderboards/([^/]+)"): (P(f"/leaderboards/{lb}"), none, public),
        ("GET", r"/problems/([^/]+)"): (P(f"/problems/{lb}"), none, public),
        ("GET", r"/submissions/(\d+)"): (P(f"/submissions/{sid}"), none, expect_read),
        ("GET", r"/users/([^/]+)"): (P("/users/alice"), none, public),
        ("GET", "/login"): (P("/login"), none, public),
        ("POST", "/login"): (P("/login"), login, by_role(401, 303, 303, 303)),
        ("POST", "/logout"): (P("/logout"), none, by_role(303, 303, 303, 303)),
        # the KernelBot API popcorn-cli calls
        ("GET", "/leaderboards"): (P("/leaderboards"), none, public),
        ("GET", r"/gpus/([^/]+)"): (P(f"/gpus/{lb}"), none, public),
        ("GET", "/auth/init"): (P("/auth/init"), none, by_role(403, 403, 403, 403)),
        ("GET", "/user/submissions"): (P("/user/submissions"), none, user_only),
        ("GET", r"/user/submissions/(\d+)"): (P(f"/user/submissions/{sid}"), none, own_only),
        ("GET", r"/user/submissions/(\d+)/profile"): (P(f"/user/submissions/{sid}/profile"), none,
                                                      by_role(401, 403, 404, 404)),
        ("DELETE", r"/user/submissions/(\d+)"): (
            lambda w_, role, phase: f"/user/submissions/{deletable('kernelbot')(w_, role, phase)}",
            none, own_only_delete),
        ("POST", r"/submission/([^/]+)/([^/]+)/([^/]+)"): (
            lambda w_, role, phase: f"/submission/{w_.lb}/{w_.gpu}/test", file_body,
            lambda r, p: expect_create(r, p) or 202),
        ("POST", r"/([^/]+)/([^/]+)/([^/]+)"): (
            lambda w_, role, phase: f"/{w_.lb}/{w_.gpu}/test", file_body,
            lambda r, p: expect_create(r, p) or 200),
    }


def own_only_delete(role, phase):
    return {"anonymous": 401, "other": 403, "owner": 200, "admin": 200}[role]


def check_leaks(w, key, role, phase, status, headers, body):
    text = body.decode("utf-8", "replace")
    where = f"{key[0]} {key[1]} as {role} {phase} the deadline (HTTP {status})"
    may_read_code = role in ("owner", "admin") or phase == "after"
    if MARKER in text:
        w.marker_seen.add((key, role, phase))
    if MARKER in text and not may_read_code:
        fail(f"{where}: the owner's code reached the answer:\n{text[:1500]}")
    header_text = "\n".join(f"{k}: {v}" for k, v in headers.items()
                            if not (key == ("POST", "/login") and k.lower() == "set-cookie"))
    for holder, token in w.tokens.items():
        if token in text or token in header_text:
            fail(f"{where}: the {holder}'s token is in the answer")
    if re.search(r"\b" + str(w.secret_seed) + r"\b", text):
        fail(f"{where}: the leaderboard's secret seed is in the answer")
    if role != "admin":
        for value in w.secret_values:
            if re.search(r"\b" + value + r"\b", text):
                fail(f"{where}: a seed derived from the secret ({value}) is in the answer:\n"
                     f"{text[:1500]}")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        runs = parsed.get("runs", []) if isinstance(parsed, dict) else []
        if any(isinstance(r, dict) and r.get("secret") and "result" in r for r in runs):
            fail(f"{where}: the secret run's result is in the answer")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kj", required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()

    in_source = routes_in_source(args.root)
    w = None
    try:
        w = World(args.kj, args.root)
        rows = build_rows(w)
        missing = sorted(in_source - set(rows))
        if missing:
            fail("routes without a row in the access matrix: " + ", ".join(
                f"{m} {p}" for m, p in missing))
        stale = sorted(set(rows) - in_source)
        if stale:
            fail("rows for routes the server no longer has: " + ", ".join(
                f"{m} {p}" for m, p in stale))
        checked = 0
        for phase in PHASES:
            if phase == "after":
                w.set_deadline("2000-01-01T00:00:00Z")
            for key, (path, make_request, expect) in sorted(rows.items()):
                for role in ROLES:
                    url_path = path(w, role, phase)
                    kwargs = make_request(w, role, phase)
                    status, headers, body = request(w.server.url, key[0], url_path,
                                                    w.headers(role, key), **kwargs)
                    want = expect(role, phase)
                    if status != want:
                        fail(f"{key[0]} {url_path} ({key[1]}) as {role} {phase} the deadline: "
                             f"HTTP {status}, expected {want}: {body[:400]!r}")
                    check_leaks(w, key, role, phase, status, headers, body)
                    checked += 1
            # The deadline route itself moves the deadline: put it where the phase needs it.
            w.set_deadline("2100-01-01T00:00:00Z" if phase == "before" else "2000-01-01T00:00:00Z")
        # The code check can fire: the owner reads the code, and so does anyone afterwards.
        code_route = ("GET", r"/api/submissions/(\d+)/code")
        for role, phase in (("owner", "before"), ("anonymous", "after")):
            if (code_route, role, phase) not in w.marker_seen:
                fail(f"the marker line never reached the {role} reading the code {phase} the "
                     "deadline: the code check looks for the wrong thing")
        print(f"access matrix: {len(rows)} routes (all {len(in_source)} in the server's source) x "
              f"{len(ROLES)} roles x {len(PHASES)} phases = {checked} requests, statuses as "
              "expected, no code, token or secret case where it must not be")
    finally:
        if w is not None:
            w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
